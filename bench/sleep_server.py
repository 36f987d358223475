"""A stdio MCP server with tools that wait, standing in for a step's real work.

`sleep` may run beside other calls; `sleep_alone` says it is destructive (MCP's
`destructiveHint`), so the agent runs it alone.
"""

import asyncio

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("sleep", log_level="WARNING")


@server.tool(structured_output=False)
async def sleep(seconds: float = 1.0) -> str:
    """Wait `seconds` (at most 10) and answer `slept`."""
    await asyncio.sleep(min(max(seconds, 0.0), 10.0))
    return "slept"


@server.tool(structured_output=False, annotations=ToolAnnotations(destructiveHint=True))
async def sleep_alone(seconds: float = 1.0) -> str:
    """Wait `seconds` (at most 10), as a tool that must not run beside others; answer `slept`."""
    await asyncio.sleep(min(max(seconds, 0.0), 10.0))
    return "slept"


if __name__ == "__main__":
    server.run()
