"""Open the store a database target names: a postgresql:// URL or a SQLite file path."""

from __future__ import annotations

import os

from ollie_nb.tasks._errors import StoreError
from ollie_nb.tasks._location import is_database_url
from ollie_nb.tasks._store import SqlTaskStore

POSTGRES_INSTALL = "pip install 'ollie-nb[postgres]'"


def open_store(
    target: str | os.PathLike[str], *, create: bool = True, max_connections: int = 1
) -> SqlTaskStore:
    """The store behind `target`; `create` makes a missing SQLite file or PostgreSQL schema.

    psycopg is imported only here and only for a URL, so SQLite users need not install it;
    a URL without it installed is a StoreError that says what to install.
    """
    if is_database_url(target):
        try:
            from ollie_nb.tasks._postgres import PostgresTaskStore
        except ImportError as exc:
            raise StoreError(
                f"a postgresql:// database needs psycopg and psycopg-pool ({exc.name} is not "
                f"installed): {POSTGRES_INSTALL}"
            ) from exc

        return PostgresTaskStore(str(target), create=create, max_connections=max_connections)
    from ollie_nb.tasks._sqlite import SqliteTaskStore

    return SqliteTaskStore(target, create=create)
