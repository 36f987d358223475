"""A stdio MCP server with one tool that returns structured content (an output schema), as
tutorial 05's `count_words` does."""

from mcp.server import MCPServer

server = MCPServer("words", log_level="WARNING")


@server.tool(description="Count the words of a text.")
def count_words(text: str) -> str:
    """The number of words of `text`."""
    return str(len(text.split()))


if __name__ == "__main__":
    server.run()
