"""Tool servers and the dispatcher: one path for every tool call, built-in or MCP."""

from ollie_nb.tools._bounds import DEFAULT_RESULT_CAP, cap_text, clean_arguments
from ollie_nb.tools._dispatcher import Dispatcher, exc_summary
from ollie_nb.tools._environ import subprocess_environ
from ollie_nb.tools._execute import ExecuteServer
from ollie_nb.tools._listing import ListingCaps
from ollie_nb.tools._mcp import McpConnectError, McpServer
from ollie_nb.tools._notebook import NotebookToolServer, SyncRunner
from ollie_nb.tools._python import PythonServer, Workbench
from ollie_nb.tools._reasoning import PLAN_SCHEMA, ReasoningServer
from ollie_nb.tools._subagent import SubagentControl, SubagentServer
from ollie_nb.tools._types import Server, ToolInfo, ToolResult, Trust, TrustAdvice

__all__ = [
    "DEFAULT_RESULT_CAP",
    "PLAN_SCHEMA",
    "Dispatcher",
    "ExecuteServer",
    "ListingCaps",
    "McpConnectError",
    "McpServer",
    "NotebookToolServer",
    "PythonServer",
    "ReasoningServer",
    "Server",
    "SubagentControl",
    "SubagentServer",
    "SyncRunner",
    "ToolInfo",
    "ToolResult",
    "Trust",
    "TrustAdvice",
    "Workbench",
    "cap_text",
    "clean_arguments",
    "exc_summary",
    "subprocess_environ",
]
