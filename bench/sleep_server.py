"""A stdio MCP server with one tool that waits, standing in for a step's real work."""

import asyncio

from mcp.server import MCPServer

server = MCPServer("sleep", log_level="WARNING")


@server.tool(structured_output=False)
async def sleep(seconds: float = 1.0) -> str:
    """Wait `seconds` (at most 10) and answer `slept`."""
    await asyncio.sleep(min(max(seconds, 0.0), 10.0))
    return "slept"


if __name__ == "__main__":
    server.run()
