"""One gateway per boundary: no module but the tool gateway runs a tool.

Every tool call (built-in, MCP, notebook-defined, sub-agent) passes core/_routing.py's
ToolRouter, after the tool step's trust gate, approval and secret check: there the step
scope, the claim tokens and the result's redaction apply. A `Dispatcher.dispatch` or a
server's `call_tool` reached from anywhere else would skip them. The dispatcher and the
servers themselves (ollie_nb/tools) define these; the task-store gateway is handed the
dispatcher's bound method when it is wired (core/_tool_servers.py), never calls it there.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ollie_nb"
GATEWAY = PACKAGE / "core" / "_routing.py"
SERVERS = PACKAGE / "tools"


def calls_around_the_gateway() -> list[str]:
    """Each `<x>.dispatcher.dispatch(...)` or `<x>.call_tool(...)` call outside the tool
    gateway and the servers, as path:line."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == GATEWAY or SERVERS in path.parents or (PACKAGE / "tasks") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            func = node.func
            around = func.attr == "call_tool" or (
                func.attr == "dispatch"
                and isinstance(func.value, ast.Attribute)
                and func.value.attr == "dispatcher"
            )
            if around:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_only_the_tool_gateway_runs_tools():
    assert calls_around_the_gateway() == []


def test_the_gateway_itself_is_found_by_the_check():
    calls = [
        node
        for node in ast.walk(ast.parse(GATEWAY.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "dispatch"
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "dispatcher"
    ]
    assert calls  # the calls this check guards are where it looks for them
