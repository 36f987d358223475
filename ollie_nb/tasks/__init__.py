"""Reference task server: a task store (SQLite file or PostgreSQL) with an MCP front and a CLI.

It is a standalone program that ships in the package and imports nothing else of
ollie_nb: the agent core talks to it only over MCP, as to any third-party task server.
Importing this package is cheap; the MCP SDK is loaded only by `ollie_nb.tasks.server`.

In an agent config (the database goes to $PWD/.ollie/tasks.db unless --db or
$OLLIE_TASKS_DB says otherwise; MCP servers start with a minimal environment, hence PWD):

    mcpServers:
      task:
        command: ollie-tasks
        args: [serve]
        env:
          PWD: "$PWD"

A postgresql:// URL as --db or $OLLIE_TASKS_DB puts the store in a PostgreSQL database
that agents on several machines share (psycopg 3, imported only then).
"""

from __future__ import annotations

from ollie_nb.tasks._backends import open_store
from ollie_nb.tasks._errors import (
    CycleError,
    InvalidTaskError,
    StoreError,
    TaskError,
    UnknownTaskError,
)
from ollie_nb.tasks._location import is_database_url, redact_url, resolve_db, resolve_db_path
from ollie_nb.tasks._schema import SCHEMA_VERSION, STATUSES
from ollie_nb.tasks._sqlite import SqliteTaskStore
from ollie_nb.tasks._store import (
    DETACH_PARENT,
    LIST_FILTERS,
    Caller,
    Claim,
    Event,
    LeaseBounds,
    Note,
    SqlTaskStore,
    Task,
    TaskNode,
    TaskRef,
    TaskSummary,
)

TaskStore = SqliteTaskStore
"""The SQLite store under its first name."""

__all__ = [
    "DETACH_PARENT",
    "LIST_FILTERS",
    "SCHEMA_VERSION",
    "STATUSES",
    "Caller",
    "Claim",
    "CycleError",
    "Event",
    "InvalidTaskError",
    "LeaseBounds",
    "Note",
    "SqlTaskStore",
    "SqliteTaskStore",
    "StoreError",
    "Task",
    "TaskError",
    "TaskNode",
    "TaskRef",
    "TaskStore",
    "TaskSummary",
    "UnknownTaskError",
    "is_database_url",
    "open_store",
    "redact_url",
    "resolve_db",
    "resolve_db_path",
]
