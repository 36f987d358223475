"""Where the task database lives when no path is given."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DB_ENV_VAR = "OLLIE_TASKS_DB"
"""Environment variable naming the database file."""

DEFAULT_DB_RELPATH = Path(".ollie") / "tasks.db"
"""The database's place inside the project directory."""


def resolve_db_path(db: str | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """Pick the database file: `db`, else $OLLIE_TASKS_DB, else .ollie/tasks.db under $PWD.

    $PWD rather than the process's working directory: MCP clients start servers in a
    minimal environment, and the agent config passes the project directory as PWD.
    """
    env = os.environ if environ is None else environ
    if db:
        return Path(db).expanduser()
    if env.get(DB_ENV_VAR):
        return Path(env[DB_ENV_VAR]).expanduser()
    project = env.get("PWD") or os.getcwd()
    return Path(project).expanduser() / DEFAULT_DB_RELPATH
