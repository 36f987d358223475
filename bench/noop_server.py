"""A stdio MCP server with one tool that does nothing, to measure the cost of a call alone."""

from mcp.server import MCPServer

server = MCPServer("noop", log_level="WARNING")


@server.tool(structured_output=False)
def noop() -> str:
    """Do nothing and answer `ok`."""
    return "ok"


if __name__ == "__main__":
    server.run()
