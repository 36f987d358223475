"""The PostgreSQL backend: one shared database for agents on many machines (psycopg 3).

Write transactions take one advisory lock, as SQLite's `BEGIN IMMEDIATE` takes the
file's write lock: changes commit one at a time, so event seqs commit in order and a
reader's `since` cursor never skips an event that commits later with a smaller seq.
Each event also sends a NOTIFY (delivered at commit), which wakes every server's LISTEN.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import anyio
import psycopg
from psycopg import pq
from psycopg_pool import ConnectionPool, PoolTimeout

from ollie_nb.redaction import redact
from ollie_nb.tasks._errors import StoreError
from ollie_nb.tasks._location import redact_url, url_passwords
from ollie_nb.tasks._pg_schema import installed_version, migrate
from ollie_nb.tasks._store import Cursor, SqlTaskStore, make_dialect

_T = TypeVar("_T")

POSTGRES = make_dialect(
    "postgresql",
    aggregate=lambda column: f"string_agg({column}, ',' ORDER BY {column})",
    status_index="",
    # The database server's clock, the same for clients on every machine; the moment of the
    # statement (not of the transaction's start), so a write that waited for the lock
    # reads the time it runs at.
    clock="CAST(extract(epoch FROM clock_timestamp()) AS DOUBLE PRECISION)",
    # A claim-next locks the row it picks; a claimer past the write lock skips it.
    lock_next=" FOR UPDATE OF t SKIP LOCKED",
)

CHANNEL = "ollie_tasks_events"
"""NOTIFY channel; a notification means `the event log grew`, it carries no data."""

WRITE_LOCK = 0x0771E7A6
"""Advisory lock key every write transaction holds until it commits."""


@functools.lru_cache(maxsize=512)
def _pg_sql(sql: str) -> str:
    """The shared SQL (qmark placeholders) in psycopg's format style."""
    return sql.replace("%", "%%").replace("?", "%s")


class _PgConn:
    """A psycopg connection speaking the shared store's `?` SQL."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        return self._raw.execute(_pg_sql(sql), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            with self._raw.cursor() as cur:
                cur.executemany(_pg_sql(sql), rows)


class PostgresTaskStore(SqlTaskStore):
    """The store in a PostgreSQL database, reached through a small connection pool."""

    dialect = POSTGRES
    changes_are_events = True  # a NOTIFY is sent by `_event` and `_reopened` only

    def __init__(
        self, url: str, *, create: bool = True, max_connections: int = 1, timeout: float = 10.0
    ) -> None:
        self._url = url
        self._timeout = timeout
        self._origin = secrets.token_hex(8)
        self.max_concurrency = max_connections
        self._prepare(create)
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True},
            open=False,
            check=ConnectionPool.check_connection,
            name="ollie-tasks",
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to the task database {self.location}") from exc

    @property
    def location(self) -> str:
        """The database URL with its password replaced by ***."""
        return redact_url(self._url)

    def _error(self, exc: BaseException, doing: str) -> StoreError:
        """A StoreError saying what failed, with no trace of the password."""
        detail = redact(str(exc).strip() or type(exc).__name__, url_passwords(self._url))
        return StoreError(f"{doing} {self.location}: {detail}")

    def _prepare(self, create: bool) -> None:
        """Connect once to report a bad URL clearly, and install or check the schema."""
        try:
            with psycopg.connect(
                self._url, autocommit=True, connect_timeout=max(1, int(self._timeout))
            ) as conn:
                if create:
                    migrate(conn)
                elif installed_version(conn) == 0:
                    raise StoreError(
                        f"no task tables in {self.location} (run `ollie-tasks serve` "
                        "on it once to create them)"
                    )
        except psycopg.Error as exc:
            raise self._error(exc, "cannot use task database") from None

    def close(self) -> None:
        """Close the pool; the store is unusable afterwards."""
        self._pool.close()

    def _changed(self, conn: Any) -> None:
        # Identical notifications in one transaction collapse into one, sent at commit. The
        # payload names this store, whose own changes are signalled by the server directly.
        conn.execute("SELECT pg_notify(?, ?)", (CHANNEL, self._origin))

    def _reopened(self, conn: Any) -> None:
        # No origin in the payload: this store's own server listens for it too.
        conn.execute("SELECT pg_notify(?, '')", (CHANNEL,))

    def _transact(self, work: Callable[[Any], _T], *, write: bool) -> _T:
        """Run `work` in one transaction: writes serialised, reads on one snapshot."""
        try:
            with self._pool.connection(timeout=self._timeout) as raw:
                raw.execute("BEGIN" if write else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                try:
                    if write:
                        raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                    result = work(_PgConn(raw))
                    raw.execute("COMMIT")
                except BaseException:
                    if raw.info.transaction_status != pq.TransactionStatus.UNKNOWN:
                        with contextlib.suppress(psycopg.Error):
                            raw.execute("ROLLBACK")
                    raise
                return result
        except PoolTimeout as exc:
            raise StoreError(
                f"no connection to the task database {self.location} within "
                f"{self._timeout:g} s; try again"
            ) from exc
        except psycopg.Error as exc:
            raise self._error(exc, "task database error on") from None

    async def watch_changes(
        self, on_change: Callable[[], Awaitable[None]], interval: float
    ) -> None:
        """LISTEN for the NOTIFY of every other store's commit that logged events.

        On a lost connection, listen again after a pause, and report a change then: one
        may have been missed meanwhile.
        """
        while True:
            try:
                aconn = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
                async with aconn:
                    await aconn.execute(f"LISTEN {CHANNEL}")
                    await on_change()  # anything that happened while not listening
                    async for note in aconn.notifies():
                        if note.payload != self._origin:
                            await on_change()
            except psycopg.Error:
                await anyio.sleep(max(interval, 1.0))
