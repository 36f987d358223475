"""SQLite schema of the task store and its forward-only migrations."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from ollie_nb.tasks._errors import StoreError

STATUSES: tuple[str, ...] = ("open", "in_progress", "done", "failed", "cancelled", "deferred")
"""Every status a task can have, in the order people read them."""

CLOSED_STATUSES: frozenset[str] = frozenset({"done", "failed", "cancelled"})
"""Statuses that set `closed_at`: the task's work is over, one way or another."""

_STATUS_CHECK = ", ".join(f"'{s}'" for s in STATUSES)

# Each migration is a list of single statements, applied in one transaction
# together with its row in schema_version (executescript would commit early).
# Append new versions; never edit an applied one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""
        CREATE TABLE tasks (
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
        # Covers the blocker lookup of `ready`: status by id without touching the row.
        "CREATE INDEX tasks_id_status ON tasks(id, status)",
        # deps(task, blocker): `task` cannot be ready before `blocker` is done.
        """
        CREATE TABLE deps (
            task    TEXT NOT NULL REFERENCES tasks(id),
            blocker TEXT NOT NULL REFERENCES tasks(id),
            PRIMARY KEY (task, blocker),
            CHECK (task <> blocker)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX deps_blocker ON deps(blocker, task)",
        """
        CREATE TABLE labels (
            task  TEXT NOT NULL REFERENCES tasks(id),
            label TEXT NOT NULL,
            PRIMARY KEY (task, label)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX labels_label ON labels(label, task)",
        """
        CREATE TABLE notes (
            id   INTEGER PRIMARY KEY,
            task TEXT NOT NULL REFERENCES tasks(id),
            time TEXT NOT NULL,
            text TEXT NOT NULL
        )
        """,
        "CREATE INDEX notes_task ON notes(task, id)",
        # AUTOINCREMENT: a seq is never reused, so `since` cursors stay valid.
        """
        CREATE TABLE events (
            seq     INTEGER PRIMARY KEY AUTOINCREMENT,
            time    TEXT NOT NULL,
            type    TEXT NOT NULL,
            task    TEXT NOT NULL,
            payload TEXT NOT NULL
        )
        """,
        "CREATE INDEX events_task ON events(task, seq)",
    ),
    (
        # A claim's lease: when it ends, in seconds since the epoch by the store's clock;
        # NULL for no lease (and for every task not in progress).
        "ALTER TABLE tasks ADD COLUMN lease_until REAL",
        "CREATE INDEX tasks_lease ON tasks(lease_until) WHERE lease_until IS NOT NULL",
    ),
    (
        # The SHA-256 of the token task_claim answered, NULL for a task no task_claim holds:
        # only its holder may renew, settle, release or hand over the claim.
        "ALTER TABLE tasks ADD COLUMN claim_token TEXT",
    ),
    (
        # Who set the label: the HTTP user of the call, NULL for an unnamed (stdio, CLI) one.
        "ALTER TABLE labels ADD COLUMN setter TEXT",
    ),
    (
        # The inbox: what waits on a person. `answer` NULL while open; `deadline` in
        # seconds since the epoch by the store's clock (an unanswered row past it is denied).
        """
        CREATE TABLE inbox (
            id          TEXT PRIMARY KEY,
            kind        TEXT NOT NULL CHECK (kind IN ('approval', 'plan_review', 'cap')),
            goal        TEXT NOT NULL DEFAULT '',
            step        TEXT NOT NULL DEFAULT '',
            asker       TEXT NOT NULL,
            what        TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            deadline    REAL NOT NULL,
            answer      TEXT,
            answered_by TEXT,
            answered_at TEXT
        )
        """,
        "CREATE INDEX inbox_open ON inbox(answer, deadline)",
    ),
    (
        # The claim's progress as its holder's last heartbeat told it (NULL: none told):
        # tokens and dollars spent on the step so far, and the last tool it called.
        "ALTER TABLE tasks ADD COLUMN progress_tokens INTEGER",
        "ALTER TABLE tasks ADD COLUMN progress_cost REAL",
        "ALTER TABLE tasks ADD COLUMN progress_tool TEXT",
    ),
)

SCHEMA_VERSION: int = len(MIGRATIONS)
"""The schema version this code writes and expects."""


def _installed_version(conn: sqlite3.Connection) -> int:
    """Return the schema version recorded in the database, 0 for a fresh file."""
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not has_table:
        return 0
    (version,) = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(version)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the database up to SCHEMA_VERSION; safe when several processes start at once."""
    if _installed_version(conn) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Checked again under the write lock: another process may have migrated meanwhile.
        current = _installed_version(conn)
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the task database has schema version {current}, newer than this "
                f"ollie-tasks understands ({SCHEMA_VERSION}); upgrade ollie-nb"
            )
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version - 1]:
                conn.execute(statement)
            applied_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
            conn.execute("INSERT INTO schema_version VALUES (?, ?)", (version, applied_at))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
