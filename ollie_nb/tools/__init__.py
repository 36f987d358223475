"""Tool servers and the dispatcher: one path for every tool call, built-in or MCP."""

from ollie_nb.tools._dispatcher import Dispatcher, exc_summary
from ollie_nb.tools._execute import ExecuteServer
from ollie_nb.tools._mcp import McpConnectError, McpServer
from ollie_nb.tools._reasoning import PLAN_SCHEMA, ReasoningServer
from ollie_nb.tools._types import Server, ToolInfo, ToolResult

__all__ = [
    "PLAN_SCHEMA",
    "Dispatcher",
    "ExecuteServer",
    "McpConnectError",
    "McpServer",
    "ReasoningServer",
    "Server",
    "ToolInfo",
    "ToolResult",
    "exc_summary",
]
