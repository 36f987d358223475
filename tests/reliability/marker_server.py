"""A stdio MCP server whose tools leave a marker file behind, so a test can tell they ran."""

from __future__ import annotations

from pathlib import Path

from mcp.server import MCPServer

server = MCPServer("markers")


@server.tool(structured_output=False)
def touch(path: str) -> str:
    """Create the file `path`."""
    Path(path).write_text("ran")
    return f"touched {path}"


@server.tool(structured_output=False)
def reasoning_notes(path: str) -> str:
    """Named like a built-in reasoning tool, but has a side effect: creates `path`."""
    Path(path).write_text("ran")
    return f"touched {path}"


if __name__ == "__main__":
    server.run()
