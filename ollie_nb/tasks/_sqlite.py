"""The SQLite backend: the whole store in one file, shared by processes through WAL mode."""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from ollie_nb.tasks._errors import StoreError
from ollie_nb.tasks._schema import migrate
from ollie_nb.tasks._store import Conn, SqlTaskStore, make_dialect

_T = TypeVar("_T")

SQLITE = make_dialect(
    "sqlite",
    # group_concat walks the (task, label) and (task, blocker) primary keys, so both lists
    # come out sorted already.
    aggregate=lambda column: f"group_concat({column}, ',')",
    # The planner would otherwise take the primary-key index and read every blocker's row
    # just for its status.
    status_index="INDEXED BY tasks_id_status",
    # This machine's clock, the one every process sharing the file reads.
    clock="((julianday('now') - 2440587.5) * 86400.0)",
)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    """True when SQLite gave up waiting for another connection's lock."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _create_private(path: Path) -> None:
    """Create the database file (and its missing directory) readable by its owner only.

    SQLite gives the -wal and -shm files the database file's permissions.
    """
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


class SqliteTaskStore(SqlTaskStore):
    """The store in one SQLite file.

    Every change is one `BEGIN IMMEDIATE` transaction, so several processes can share the
    file and a crash never leaves half a change. One connection per store, guarded by a
    lock, so a store may be used from worker threads.
    """

    dialect = SQLITE

    def __init__(
        self, path: str | os.PathLike[str], *, create: bool = True, busy_timeout: float = 10.0
    ) -> None:
        self.path = Path(path).expanduser()
        self._busy_timeout = busy_timeout
        self._lock = threading.RLock()
        if not create and not self.path.exists():
            raise StoreError(f"no task database at {self.path}")
        try:
            if create:
                _create_private(self.path)
            conn = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open task database {self.path}: {exc}") from exc
        self._conn = conn
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            # In WAL mode NORMAL never corrupts and never loses a commit when a process
            # dies; only a power cut can drop the last commits. FULL would fsync each one.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            migrate(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(f"cannot use task database {self.path}: {exc}") from exc
        except BaseException:
            conn.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(
            str(self.path),
            timeout=self._busy_timeout,
            isolation_level=None,  # transactions are explicit: BEGIN IMMEDIATE ... COMMIT
            check_same_thread=False,  # guarded by self._lock instead
        )

    @property
    def location(self) -> str:
        """The database file's path."""
        return str(self.path)

    def close(self) -> None:
        """Close the connection; the store is unusable afterwards."""
        with self._lock:
            self._conn.close()

    def _transact(self, work: Callable[[Conn], _T], *, write: bool) -> _T:
        """Run `work` in one transaction, retrying while other processes hold the lock."""
        deadline = time.monotonic() + self._busy_timeout
        conn = self._conn
        with self._lock:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                    try:
                        result = work(conn)
                        conn.execute("COMMIT")
                    except BaseException:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise
                    return result
                except sqlite3.OperationalError as exc:
                    if not _is_busy(exc):
                        raise StoreError(f"task database error: {exc}") from exc
                    if time.monotonic() >= deadline:
                        raise StoreError(
                            f"the task database stayed locked for {self._busy_timeout:g} s "
                            "by another process; try again"
                        ) from exc
                    time.sleep(random.uniform(0.005, 0.05))

    async def watch_changes(
        self, on_change: Callable[[], Awaitable[None]], interval: float
    ) -> None:
        """Look at `PRAGMA data_version` every `interval` s; it moves on any other commit.

        The pragma reads a counter in the WAL index (shared memory), no table and no lock,
        so checking it often costs next to nothing. A connection of its own: the counter
        does not move for the connection's own commits.
        """
        import anyio  # here: importing the package stays cheap for the CLI

        probe = self._connect()
        try:
            last = probe.execute("PRAGMA data_version").fetchone()[0]
            while True:
                await anyio.sleep(interval)
                try:
                    version = probe.execute("PRAGMA data_version").fetchone()[0]
                except sqlite3.Error:
                    continue  # e.g. busy for a moment: look again next round
                if version != last:
                    last = version
                    await on_change()
        finally:
            probe.close()
