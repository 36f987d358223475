"""Reference task server: a SQLite task store with an MCP front (`ollie-tasks serve`) and a CLI.

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
"""

from __future__ import annotations

from ollie_nb.tasks._errors import (
    CycleError,
    InvalidTaskError,
    StoreError,
    TaskError,
    UnknownTaskError,
)
from ollie_nb.tasks._location import resolve_db_path
from ollie_nb.tasks._schema import SCHEMA_VERSION, STATUSES
from ollie_nb.tasks._store import (
    DETACH_PARENT,
    LIST_FILTERS,
    Event,
    Note,
    Task,
    TaskNode,
    TaskRef,
    TaskStore,
    TaskSummary,
)

__all__ = [
    "DETACH_PARENT",
    "LIST_FILTERS",
    "SCHEMA_VERSION",
    "STATUSES",
    "CycleError",
    "Event",
    "InvalidTaskError",
    "Note",
    "StoreError",
    "Task",
    "TaskError",
    "TaskNode",
    "TaskRef",
    "TaskStore",
    "TaskSummary",
    "UnknownTaskError",
    "resolve_db_path",
]
