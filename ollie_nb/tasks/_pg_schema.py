"""PostgreSQL schema of the task store and its forward-only migrations (SQLite's twin)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ollie_nb.tasks._errors import StoreError
from ollie_nb.tasks._schema import STATUSES

_STATUS_CHECK = ", ".join(f"'{s}'" for s in STATUSES)

MIGRATION_LOCK = 0x0771E7A5
"""Advisory lock key held while migrating, so servers starting together migrate once."""

# The same tables as the SQLite schema. `rowid` plays SQLite's implicit rowid: the
# creation order every list follows. Append new versions; never edit an applied one.
PG_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""
        CREATE TABLE tasks (
            rowid      BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
            id         TEXT PRIMARY KEY,
            title      TEXT NOT NULL,
            body       TEXT NOT NULL DEFAULT '',
            status     TEXT NOT NULL DEFAULT 'open' CHECK (status IN ({_STATUS_CHECK})),
            parent     TEXT REFERENCES tasks(id),
            assignee   TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            closed_at  TEXT
        )
        """,
        "CREATE INDEX tasks_status ON tasks(status)",
        "CREATE INDEX tasks_parent ON tasks(parent)",
        "CREATE INDEX tasks_id_status ON tasks(id) INCLUDE (status)",
        """
        CREATE TABLE deps (
            task    TEXT NOT NULL REFERENCES tasks(id),
            blocker TEXT NOT NULL REFERENCES tasks(id),
            PRIMARY KEY (task, blocker),
            CHECK (task <> blocker)
        )
        """,
        "CREATE INDEX deps_blocker ON deps(blocker, task)",
        """
        CREATE TABLE labels (
            task  TEXT NOT NULL REFERENCES tasks(id),
            label TEXT NOT NULL,
            PRIMARY KEY (task, label)
        )
        """,
        "CREATE INDEX labels_label ON labels(label, task)",
        """
        CREATE TABLE notes (
            id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            task TEXT NOT NULL REFERENCES tasks(id),
            time TEXT NOT NULL,
            text TEXT NOT NULL
        )
        """,
        "CREATE INDEX notes_task ON notes(task, id)",
        """
        CREATE TABLE events (
            seq     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            time    TEXT NOT NULL,
            type    TEXT NOT NULL,
            task    TEXT NOT NULL,
            payload TEXT NOT NULL
        )
        """,
        "CREATE INDEX events_task ON events(task, seq)",
    ),
    (
        # A claim's lease end in seconds since the epoch by the database server's clock.
        "ALTER TABLE tasks ADD COLUMN lease_until DOUBLE PRECISION",
        "CREATE INDEX tasks_lease ON tasks(lease_until) WHERE lease_until IS NOT NULL",
    ),
    (
        # The SHA-256 of the token of the claim that holds the task (NULL: none).
        "ALTER TABLE tasks ADD COLUMN claim_token TEXT",
    ),
    (
        # Who set the label: the HTTP user of the call, NULL for an unnamed (stdio, CLI) one.
        "ALTER TABLE labels ADD COLUMN setter TEXT",
    ),
    (
        # The inbox: what waits on a person (see the SQLite schema).
        """
        CREATE TABLE inbox (
            rowid       BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
            id          TEXT PRIMARY KEY,
            kind        TEXT NOT NULL CHECK (kind IN ('approval', 'plan_review', 'cap')),
            goal        TEXT NOT NULL DEFAULT '',
            step        TEXT NOT NULL DEFAULT '',
            asker       TEXT NOT NULL,
            what        TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            deadline    DOUBLE PRECISION NOT NULL,
            answer      TEXT,
            answered_by TEXT,
            answered_at TEXT
        )
        """,
        "CREATE INDEX inbox_open ON inbox(answer, deadline)",
    ),
    (
        # The claim's progress as its holder's last heartbeat told it (see the SQLite schema).
        "ALTER TABLE tasks ADD COLUMN progress_tokens BIGINT",
        "ALTER TABLE tasks ADD COLUMN progress_cost DOUBLE PRECISION",
        "ALTER TABLE tasks ADD COLUMN progress_tool TEXT",
    ),
)

PG_SCHEMA_VERSION: int = len(PG_MIGRATIONS)
"""The PostgreSQL schema version this code writes and expects."""


def installed_version(conn: Any) -> int:
    """The schema version recorded in the database, 0 when it has no task tables yet."""
    (table,) = conn.execute("SELECT to_regclass('schema_version')").fetchone()
    if table is None:
        return 0
    (version,) = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(version)


def migrate(conn: Any) -> None:
    """Bring the database up to PG_SCHEMA_VERSION in one transaction (psycopg, autocommit on)."""
    if installed_version(conn) == PG_SCHEMA_VERSION:
        return
    # The lock is taken before the transaction begins: a transaction that started before
    # another server's migration committed could still see the old catalog after waiting.
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        with conn.transaction():
            _migrate_locked(conn)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


def _migrate_locked(conn: Any) -> None:
    """Apply the missing migrations; the caller holds the migration lock and a transaction."""
    current = installed_version(conn)  # again, under the lock
    if current > PG_SCHEMA_VERSION:
        raise StoreError(
            f"the task database has schema version {current}, newer than this "
            f"ollie-tasks understands ({PG_SCHEMA_VERSION}); upgrade ollie-nb"
        )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    for version in range(current + 1, PG_SCHEMA_VERSION + 1):
        for statement in PG_MIGRATIONS[version - 1]:
            conn.execute(statement)
        applied_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        conn.execute("INSERT INTO schema_version VALUES (%s, %s)", (version, applied_at))
