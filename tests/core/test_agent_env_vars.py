"""`$VAR`s in an agent's servers: the kernel's Python is `$OLLIE_PYTHON`; an unset path is refused."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ollie_nb.core import AgentConfig, connect_tool_servers, expand_vars
from ollie_nb.tools import Dispatcher


def build(tmp_path: Path, servers: dict, environ: dict | None = None):
    async def scenario():
        env = await connect_tool_servers(
            AgentConfig.from_dict({"mcpServers": servers}),
            Dispatcher(),
            tmp_path,
            environ={"PATH": os.environ["PATH"], **(environ or {})},
        )
        await env.aclose()
        return env

    return asyncio.run(scenario())


def test_an_unset_variable_in_a_path_is_an_error_naming_it(tmp_path):
    servers = {
        "tasks": {
            "command": "$OLLIE_PYTHON",
            "args": ["-m", "ollie_nb.tasks", "serve", "--db", "${NOPE}/x/tasks.db"],
        }
    }
    env = build(tmp_path, servers)
    status = env.statuses["tasks"]
    assert status.state == "failed"
    assert status.detail == (
        "tasks: $NOPE is not set (used in its command, args, cwd or url); set it, "
        "or give a default as ${NOPE:-VALUE}"
    )
    assert env.messages == [f"MCP server {status.detail}"]
    assert env.task_server is None
    assert not Path("/x/tasks.db").exists()


def test_a_default_fills_an_unset_variable_and_ollie_python_is_the_kernels(tmp_path):
    servers = {
        "tasks": {
            "command": "$OLLIE_PYTHON",
            "args": ["-m", "ollie_nb.tasks", "serve", "--db", "${TASKS_DIR:-by-default}/t.db"],
        }
    }
    env = build(tmp_path, servers)
    assert env.statuses["tasks"].state == "connected", env.statuses["tasks"].detail
    assert env.task_server == "tasks"
    assert (tmp_path / "by-default" / "t.db").is_file()  # relative to the server's cwd


def test_expand_vars_defaults():
    env = {"SET": "value", "EMPTY": ""}
    assert expand_vars("${SET:-d}/${EMPTY:-d}/${UNSET:-d}", env) == "value/d/d"
    missing: list[str] = []
    assert expand_vars("$UNSET/${ALSO}", env, missing) == "/"
    assert missing == ["UNSET", "ALSO"]
