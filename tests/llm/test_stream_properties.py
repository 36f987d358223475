"""Stream assembly by property: tool calls and text come out whole however the provider cuts
its deltas and however the bytes of the stream arrive (split at any byte, inside a UTF-8
character too), in the OpenAI format with and without `index` and in Anthropic's."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ollie_nb.llm import Message, TextDelta, ToolCallsReady
from tests.llm import test_anthropic as anthropic_wire
from tests.llm import test_openai as openai_wire
from tests.support.llm_fake_provider import FakeProvider, Reply, collect

# One provider serves every example: its requests are not read, each example queues its reply.
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
VALUES = st.one_of(st.integers(-5, 5), st.text('aé"\\{}: 漢', max_size=6), st.booleans())
ARGS = st.dictionaries(st.sampled_from(["p", "f", "city", "ü"]), VALUES, max_size=3)
TOOLS = [openai_wire.WEATHER, openai_wire.TIME]


def pieces(draw: st.DrawFn, text: str) -> list[str]:
    """`text` cut at any characters into pieces (an empty first piece as servers send)."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=4)))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    return ["", *(text[a:b] for a, b in pairwise(bounds))]


def split_bytes(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """The stream's bytes as the network may deliver them: cut anywhere."""
    cuts = sorted(draw(st.sets(st.integers(1, len(data) - 1), max_size=12)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in pairwise(bounds)]


@st.composite
def openai_stream(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[bytes]]:
    """Calls and an OpenAI stream of them: interleaved with `index`, one after the other
    without it (as such servers send them), then cut at any byte."""
    calls = draw(st.lists(ARGS, min_size=1, max_size=3))
    indexed = draw(st.booleans())
    queues = [pieces(draw, json.dumps(args, ensure_ascii=False)) for args in calls]
    order = [i for i, q in enumerate(queues) for _ in q]
    if indexed:
        order = draw(st.permutations(order))
    opened = list(dict.fromkeys(order))  # calls are numbered in the order they open
    sent = [0] * len(calls)
    events: list[bytes] = []
    for j in order:
        i, piece, first = opened.index(j), queues[j][sent[j]], sent[j] == 0
        sent[j] += 1
        call_id, name = (f"call_{i}", TOOLS[i % 2].name) if first else (None, None)
        if indexed:
            events.append(openai_wire.call_delta(i, piece, call_id, name))
        else:
            events.append(openai_wire.unindexed_delta(piece, call_id, name))
    events += [openai_wire.chunk({}, "tool_calls"), openai_wire.DONE]
    return [calls[j] for j in opened], split_bytes(draw, b"".join(events))


@SETTINGS
@given(openai_stream())
def test_openai_tool_calls_come_out_whole_however_the_stream_is_cut(
    provider: FakeProvider, stream
) -> None:
    calls, chunks = stream
    provider.queue(Reply(chunks=chunks))
    backend = openai_wire.backend(provider)
    events = collect(lambda: backend.chat_stream([Message.user("go")], TOOLS))
    [ready] = [e for e in events if isinstance(e, ToolCallsReady)]
    assert [c.id for c in ready.tool_calls] == [f"call_{i}" for i in range(len(calls))]
    assert [c.name for c in ready.tool_calls] == [TOOLS[i % 2].name for i in range(len(calls))]
    assert [json.loads(c.arguments) for c in ready.tool_calls] == calls


@st.composite
def anthropic_stream(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], list[bytes]]:
    """A text block then tool-use blocks, each cut into deltas, the bytes cut anywhere."""
    text = draw(st.text("ab é漢\n", min_size=1, max_size=12))
    calls = draw(st.lists(ARGS, min_size=1, max_size=3))
    blocks = anthropic_wire.text_block(0, *pieces(draw, text)[1:])
    for i, args in enumerate(calls, 1):
        json_pieces = pieces(draw, json.dumps(args, ensure_ascii=False))
        blocks += anthropic_wire.tool_block(i, f"toolu_{i}", "get_weather", *json_pieces)
    events = [anthropic_wire.MESSAGE_START, *blocks, *anthropic_wire.finish("tool_use", 9)]
    return text, calls, split_bytes(draw, b"".join(events))


@SETTINGS
@given(anthropic_stream())
def test_anthropic_text_and_tool_calls_come_out_whole_however_cut(
    provider: FakeProvider, stream
) -> None:
    text, calls, chunks = stream
    provider.queue(Reply(chunks=chunks))
    backend = anthropic_wire.backend(provider)
    events = collect(lambda: backend.chat_stream([Message.user("go")], [anthropic_wire.WEATHER]))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == text
    [ready] = [e for e in events if isinstance(e, ToolCallsReady)]
    assert [c.id for c in ready.tool_calls] == [f"toolu_{i}" for i in range(1, len(calls) + 1)]
    assert [json.loads(c.arguments) for c in ready.tool_calls] == calls
