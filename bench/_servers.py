"""The MCP servers the rows talk to: the shipped task server, and a server with one no-op tool."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

NOOP_SERVER = Path(__file__).with_name("noop_server.py")
THIS_TREE = {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}
"""A server's env that imports this tree's ollie_nb (MCP servers get a bare env: without it
the rows would measure whatever ollie_nb is installed)."""


def task_server_args(db: str | os.PathLike[str]) -> list[str]:
    """Arguments to `sys.executable` that serve a task database over stdio (as `ollie-tasks`)."""
    return ["-m", "ollie_nb.tasks", "serve", "--db", os.fspath(db)]


def task_server_params(
    db: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None
) -> StdioServerParameters:
    """The raw SDK parameters for the same task server, started in `cwd`."""
    return StdioServerParameters(
        command=sys.executable, args=task_server_args(db), cwd=cwd, env=THIS_TREE
    )


def task_server_config(db: str | os.PathLike[str], **extra: Any) -> dict[str, Any]:
    """An `mcpServers` entry for the same task server."""
    return {"command": sys.executable, "args": task_server_args(db), "env": THIS_TREE, **extra}


def first_text(result: Any) -> str:
    """The first text item of a raw SDK tool result."""
    return result.content[0].text
