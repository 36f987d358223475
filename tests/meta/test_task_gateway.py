"""One task-store gateway: only TaskClient names the convention's tools or calls them.

Code outside planning/_client.py (the gateway), planning/_convention.py (the names) and
the task server itself (ollie_nb/tasks/, a program of its own) must neither write a
`task_*` tool name as a string nor call a task client's tools by name: it asks the client.
Docstrings may name tools; code may not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ollie_nb"
GATEWAY = {
    PACKAGE / "planning" / "_client.py",  # the only caller of task tools
    PACKAGE / "planning" / "_convention.py",  # where the names are defined
}
SERVER = PACKAGE / "tasks"  # the server side of the convention
TOOL = re.compile(
    r"\btask_(create|update|claim|heartbeat|read|list|events|delete|edit|dep|ask|inbox|answer)\b"
    r"|\btask_\*"
)
RAW_CALLS = {"call", "_call", "_dispatch"}  # how a tool is called by name


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (prose, allowed)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def offences(source: str, name: str) -> list[str]:
    """Where `source` names a task tool in a string or calls a task client's tool by name."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and id(node) not in prose and TOOL.search(text):
            found.append(f"{name}:{node.lineno}: names a task tool: {text[:60]!r}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RAW_CALLS
            and "client" in ast.unparse(node.func.value).lower()
        ):
            found.append(f"{name}:{node.lineno}: calls a task client's tool by name")
    return found


def outside_the_gateway() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in GATEWAY and SERVER not in path.parents
    ]


def test_no_code_outside_the_gateway_names_or_calls_a_task_tool() -> None:
    found = [
        line
        for path in outside_the_gateway()
        for line in offences(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == [], "\n".join(found)


def test_a_raw_task_call_is_caught() -> None:
    """The check can fail: a tool named in code, and a client called by a tool's name."""
    named = 'async def f(d):\n    """Calls `task_list` (prose is fine)."""\n    await d("s", "task_list", {})\n'
    called = "async def f(env):\n    await env.task_client._call(TASK_READ, {})\n"
    assert [line.split(": ", 1)[1] for line in offences(named, "m")] == [
        "names a task tool: 'task_list'"
    ]
    assert offences(called, "m") == ["m:2: calls a task client's tool by name"]


def test_the_client_has_no_public_raw_call() -> None:
    from ollie_nb.planning import TaskClient

    assert not hasattr(TaskClient, "call")
