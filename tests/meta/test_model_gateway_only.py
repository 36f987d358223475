"""One gateway per boundary: no module but the model gateway sends a model request.

A backend's `chat_stream` reached from anywhere else would skip the spend caps, the
in-flight reservation, the span and the usage count. The backends themselves (ollie_nb/llm)
define it and may wrap one another; everything above them asks core/_model_gateway.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ollie_nb"
GATEWAY = PACKAGE / "core" / "_model_gateway.py"
BACKENDS = PACKAGE / "llm"


def requests_around_the_gateway() -> list[str]:
    """Each `<something>.chat_stream` read outside the backends and the gateway, as path:line."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == GATEWAY or BACKENDS in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "chat_stream":
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_only_the_model_gateway_sends_model_requests():
    assert requests_around_the_gateway() == []


def test_the_gateway_itself_is_found_by_the_check():
    source = GATEWAY.read_text(encoding="utf-8")
    reads = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "chat_stream"
    ]
    assert len(reads) == 1  # the one request this check guards
