"""Agent settings, kernel environments and history checks that several test folders share."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ollie_nb.core import AgentConfig

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
# MCP servers start with a bare environment: without this the server would import the
# installed ollie_nb, not this tree's (a bug planted in the store would go unseen).
THIS_TREE = {"PYTHONPATH": str(ROOT)}


def tasks_agent(db, **extra) -> AgentConfig:
    """An agent whose one server is the real ollie-tasks over stdio, on the database `db`."""
    args = ["-m", "ollie_nb.tasks", "serve", "--db", str(db)]
    server = {"command": sys.executable, "args": args, "env": THIS_TREE}
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}, **extra})


def tasks_agent_file(folder: Path) -> Path:
    """An agent JSON whose one server is ollie-tasks on a database in `folder`."""
    args = ["-m", "ollie_nb.tasks", "serve", "--db", str(folder / "tasks.db")]
    server = {"command": sys.executable, "args": args, "env": THIS_TREE}
    path = folder / "with-tasks.json"
    path.write_text(json.dumps({"mcpServers": {"tasks": server}}))
    return path


def kernel_env(base: Path) -> dict[str, str]:
    """A kernel's environment: private data and config dirs under `base`, the offline model."""
    return {
        "OLLIE_DATA_DIR": str(base / "data"),
        "OLLIE_CONFIG_DIR": str(base / "config"),
        "OLLIE_ENV_FILE": str(base / "config" / "env"),
        "OLLIE_BACKEND": "offline",
    }


def assert_consistent(history) -> None:
    """Every assistant tool call is answered by exactly one tool message, in order."""
    pending: list[str] = []
    for message in history:
        if message.role == "assistant":
            assert not pending, f"unanswered calls {pending}"
            pending = [c.id for c in message.tool_calls]
        elif message.role == "tool":
            assert message.tool_call_id in pending
            pending.remove(message.tool_call_id)
        elif message.role == "user":
            assert not pending, f"user message while calls {pending} are unanswered"
    assert not pending
