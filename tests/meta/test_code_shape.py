"""Size is a smell worth a sentence: a long function must say why, next to it.

A function over FUNCTION_LINES lines needs a `# long: <reason>` comment on the line
above its `def` (or its decorators). Modules are sized by concept, not by a line count,
so they have no such rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ollie_nb"
FUNCTION_LINES = 60


def _reason_above(lines: list[str], first_line: int) -> bool:
    """Whether the comment block right above line `first_line` (1-based) starts `# long:`."""
    index = first_line - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        if lines[index].strip().startswith("# long:"):
            return True
        index -= 1
    return False


def long_functions() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = node.end_lineno - node.lineno + 1
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if length > FUNCTION_LINES and not _reason_above(lines, first):
                found.append(
                    f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({length} lines)"
                )
    return found


def test_no_long_function_without_a_reason() -> None:
    assert long_functions() == []
