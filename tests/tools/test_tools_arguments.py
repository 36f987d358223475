"""Tool arguments the SDK cannot encode (lone surrogates) are cleaned before dispatch."""

from __future__ import annotations

import json
import sys

import pytest

from ollie_nb.tools import Dispatcher, McpServer, clean_arguments
from tests.support.agents import FIXTURES


def test_clean_arguments_fixes_every_string_at_any_depth():
    raw = {
        "text": "a\ud800b",
        "pair": "\ud83d\ude00",  # a pair decoded separately: joined into one emoji
        "items": ["ok", "\udfff"],
        "nested": {"k\udc00": {"deep": ("x\ud801",)}},
        "n": 3,
        "none": None,
    }
    assert clean_arguments(raw) == {
        "text": "a\ufffdb",
        "pair": "😀",
        "items": ["ok", "\ufffd"],
        "nested": {"k\ufffd": {"deep": ["x\ufffd"]}},
        "n": 3,
        "none": None,
    }


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_lone_surrogate_in_arguments_does_not_end_a_stdio_session():
    """Decoded JSON `"\\ud800"` in a nested argument: the call answers, and so does the next."""
    server = McpServer("bounds", command=sys.executable, args=[str(FIXTURES / "bounds_server.py")])
    args = json.loads(
        '{"text": "bad \\ud800 end", "items": ["\\udc00"], "nested": {"k": "\\ud83d"}}'
    )

    async def run():
        d = Dispatcher()
        d.add_server("bounds", server)
        await server.connect()
        try:
            first = await d.dispatch("bounds", "echo", args)
            second = await d.dispatch("bounds", "echo", {"text": "still here"})
            return first, second, server.connected
        finally:
            await d.aclose()

    first, second, connected = await run()
    assert not first.is_error, first.text
    assert json.loads(first.text) == {
        "text": "bad \ufffd end",
        "items": ["\ufffd"],
        "nested": {"k": "\ufffd"},
    }
    assert json.loads(second.text) == {"text": "still here", "items": None, "nested": None}
    assert connected
