"""Where the task database lives: a file path (SQLite) or a postgresql:// URL, and how to print it."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from ollie_nb.redaction import MASK

DB_ENV_VAR = "OLLIE_TASKS_DB"
"""Environment variable naming the database: a file path or a postgresql:// URL."""

DEFAULT_DB_RELPATH = Path(".ollie") / "tasks.db"
"""The database's place inside the project directory."""

URL_SCHEMES: tuple[str, ...] = ("postgresql://", "postgres://")
"""Prefixes that mark a database given as a PostgreSQL URL rather than a file path."""


def is_database_url(target: str | os.PathLike[str]) -> bool:
    """True when `target` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(target, str) and target.strip().lower().startswith(URL_SCHEMES)


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


def resolve_db(db: str | None = None, environ: Mapping[str, str] | None = None) -> str | Path:
    """Like `resolve_db_path`, but a postgresql:// URL (option or variable) stays a URL."""
    env = os.environ if environ is None else environ
    chosen = db or env.get(DB_ENV_VAR) or ""
    if is_database_url(chosen):
        return chosen.strip()
    return resolve_db_path(db, env)


def url_passwords(url: str) -> list[str]:
    """The password of a URL, as written and decoded, from its user part or its query."""
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        if ":" in userinfo:
            raw = userinfo.split(":", 1)[1]
            found += [raw, unquote(raw)]
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key.lower() == "password" and value:
            found.append(value)
    return [s for s in found if s]


def has_password(target: str | os.PathLike[str] | None) -> bool:
    """True when `target` is a database URL that carries a password."""
    return target is not None and is_database_url(target) and bool(url_passwords(str(target)))


def redact_url(url: str) -> str:
    """The URL with its password (in the user part or `?password=`) shown as ***."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}"
    query = re.sub(r"(?i)(^|&)(password=)[^&]*", rf"\g<1>\g<2>{MASK}", parts.query)
    return parts._replace(netloc=netloc, query=query).geturl()
