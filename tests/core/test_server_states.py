"""A server's state is an enum and `%ollie mcp` / `%ollie status` show it as its word.

A real AgentCore starts with a server whose command does not exist (failed) and one
switched off (disabled); the built-in servers (reasoning, ...) are always there.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ollie_nb.core import AgentConfig, ServerState
from ollie_nb.notebook.commands.agent import _servers_line, cmd_mcp

SERVERS = {
    "broken": {"command": "/nonexistent/ollie-test-server"},
    "off": {"command": "/nonexistent/other", "disabled": True},
}


@pytest.mark.anyio
async def test_each_server_state_is_typed_and_shown_as_its_word(make_core):
    core = await make_core(agent=AgentConfig.from_dict({"mcpServers": SERVERS}))
    listing = core.list_servers()
    mcp = cmd_mcp(SimpleNamespace(on_loop=lambda fn: fn(core)), "")
    states = {s.name: s.state for s in listing.servers}
    assert states["broken"] is ServerState.FAILED and states["off"] is ServerState.DISABLED
    built_in = [name for name, state in states.items() if state is ServerState.BUILT_IN]
    assert "reasoning" in built_in and len(built_in) == len(states) - 2
    assert _servers_line(listing.servers) == ", ".join(built_in) + "; failed: broken"
    rows = {line.split()[0]: line.split()[1:3] for line in mcp.text().splitlines()[2:]}
    assert rows["reasoning"] == ["built-in", "built-in"]
    assert rows["off"] == ["-", "disabled"]
    assert rows["broken"][1] == "failed:"  # its detail follows
