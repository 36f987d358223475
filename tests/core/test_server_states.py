"""A server's state is an enum and `%ollie mcp` / `%ollie status` show it as its word.

A real AgentCore starts with a server whose command does not exist (failed) and one
switched off (disabled); the built-in servers (reasoning, ...) are always there.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from ollie_nb.core import AgentConfig, AgentCore, ServerState
from ollie_nb.llm import OfflineBackend
from ollie_nb.notebook.commands.agent import _servers_line, cmd_mcp

SERVERS = {
    "broken": {"command": "/nonexistent/ollie-test-server"},
    "off": {"command": "/nonexistent/other", "disabled": True},
}


def test_each_server_state_is_typed_and_shown_as_its_word(tmp_path):
    core = AgentCore(
        OfflineBackend(), agent=AgentConfig.from_dict({"mcpServers": SERVERS}), workdir=tmp_path
    )

    async def scenario():
        async with core:
            return core.list_servers(), cmd_mcp(SimpleNamespace(on_loop=lambda fn: fn(core)), "")

    listing, mcp = asyncio.run(scenario())
    states = {s.name: s.state for s in listing.servers}
    assert states["broken"] is ServerState.FAILED and states["off"] is ServerState.DISABLED
    built_in = [name for name, state in states.items() if state is ServerState.BUILT_IN]
    assert "reasoning" in built_in and len(built_in) == len(states) - 2
    assert _servers_line(listing.servers) == ", ".join(built_in) + "; failed: broken"
    rows = {line.split()[0]: line.split()[1:3] for line in mcp.text().splitlines()[2:]}
    assert rows["reasoning"] == ["built-in", "built-in"]
    assert rows["off"] == ["-", "disabled"]
    assert rows["broken"][1] == "failed:"  # its detail follows
