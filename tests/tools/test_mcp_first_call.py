"""The first call of a stdio tool with an output schema costs what a later call costs.

Each test runs a fresh interpreter (the modules a first call loads are the point), which
starts a real stdio MCP server whose tool returns structured content.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("rfc3987_syntax") is None,
        reason="rfc3987_syntax (jsonschema's IRI formats) is not installed",
    ),
]

SERVER = """
from mcp.server import MCPServer

server = MCPServer("words")


@server.tool(description="Count the words of a text.")
def count_words(text: str) -> str:
    return str(len(text.split()))


server.run()
"""

CLIENT = """
import asyncio, json, sys, threading
from ollie_nb.tools import McpServer


async def main():
    server = McpServer("words", command=sys.executable, args=[sys.argv[1]])
    await server.connect()
    for loader in [t for t in threading.enumerate() if t.name == "ollie-jsonschema"]:
        loader.join(120)
    before_call = "jsonschema" in sys.modules
    first = await server.call_tool("count_words", {"text": "a b c"})
    grammars_after_call = "lark" in sys.modules
    await server.aclose()
    import jsonschema

    check = jsonschema.Draft202012Validator.FORMAT_CHECKER
    iri = jsonschema.Draft202012Validator({"format": "iri"}, format_checker=check)
    print(json.dumps({
        "jsonschema_before_call": before_call,
        "grammars_after_call": grammars_after_call,
        "first": [first.text, first.is_error],
        "iri_checks": [iri.is_valid("https://example.org/ä"), iri.is_valid("not an iri")],
    }))


asyncio.run(main())
"""


def _run(tmp_path) -> dict:
    server = tmp_path / "words_server.py"
    server.write_text(SERVER)
    client = tmp_path / "client.py"
    client.write_text(textwrap.dedent(CLIENT))
    done = subprocess.run(
        [sys.executable, str(client), str(server)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_first_structured_result_is_checked_without_building_the_iri_grammars(tmp_path):
    """jsonschema loaded while the server started; its IRI grammars wait for an IRI check,
    and that check still tells an IRI from other text."""
    seen = _run(tmp_path)
    assert seen["first"] == ["3", False]
    assert seen["jsonschema_before_call"] is True
    assert seen["grammars_after_call"] is False
    assert seen["iri_checks"] == [True, False]
