"""McpServer tells a lost session and a timeout from other errors by the SDK's codes, not by text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ollie_nb.tools import McpServer, ToolResult
from tests.support.agents import FIXTURES


def _server(timeout: float = 5.0) -> McpServer:
    return McpServer(
        "b",
        command=sys.executable,
        args=[str(FIXTURES / "bounds_server.py")],
        call_timeout=timeout,
    )


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_error_whose_text_says_closed_or_timed_out_is_just_an_error():
    """A JSON-RPC error (invalid params) whose message reads like a lost connection."""
    server = _server()

    async def run():
        await server.connect()
        try:
            refused = await server.call_tool(
                "refuse", {"message": "upstream connection closed; it timed out"}
            )
            return refused, server.connected, await server.call_tool("slow", {"seconds": 0})
        finally:
            await server.aclose()

    refused, connected, after = await run()
    assert refused == ToolResult(
        "error: b.refuse: MCPError: upstream connection closed; it timed out", is_error=True
    )
    assert connected  # not taken for a dead session
    assert after == ToolResult("slept")


@pytest.mark.slow
@pytest.mark.anyio
async def test_request_timeout_and_connection_closed_by_code():
    server = _server(timeout=0.5)

    async def run():
        await server.connect()
        try:
            slow = await server.call_tool("slow", {"seconds": 3})
            usable = await server.call_tool("slow", {"seconds": 0})
            pid = _server_pid(server)
            import os
            import signal

            os.kill(pid, signal.SIGKILL)
            lost = await server.call_tool("slow", {"seconds": 2})
            return slow, usable, lost
        finally:
            await server.aclose()

    slow, usable, lost = await run()
    assert slow == ToolResult.timeout("b.slow timed out after 0.5 s")
    assert usable == ToolResult("slept")
    assert lost == ToolResult(
        "error: MCP server b is gone (MCPError: Connection closed); "
        "it will be restarted on the next call",
        is_error=True,
    )


def _server_pid(server: McpServer) -> int:
    """The pid of the server subprocess: the child of this process running bounds_server.py."""
    import os

    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and any(part.endswith(b"bounds_server.py") for part in cmd):
            return int(entry)
    raise AssertionError("bounds_server.py is not running")
