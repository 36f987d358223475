"""AnthropicBackend against a local server speaking the Messages API SSE wire format."""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

import pytest
from llm_fake_provider import FAKE_KEY, FakeProvider, Reply, collect, json_reply, sse

from ollie_nb.llm import (
    AnthropicBackend,
    Done,
    GenerationParams,
    LLMConnectionError,
    LLMHTTPError,
    Message,
    RetryNotice,
    RetryPolicy,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    ToolDef,
    Usage,
    UsageReport,
)

CACHE = {"cache_control": {"type": "ephemeral"}}
FAST = RetryPolicy(base_delay=0.01, max_delay=0.05, statuses=(429, 529))

WEATHER = ToolDef(
    "get_weather",
    "Current weather of a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def event(kind: str, **fields: Any) -> bytes:
    """One Messages API stream event: `event:` line plus JSON data with the same type."""
    return sse({"type": kind, **fields}, event=kind)


MESSAGE_START = event(
    "message_start",
    message={
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 472, "output_tokens": 2},
    },
)


def text_block(index: int, *pieces: str) -> list[bytes]:
    return [
        event("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *[
            event("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
            for p in pieces
        ],
        event("content_block_stop", index=index),
    ]


def tool_block(index: int, call_id: str, name: str, *pieces: str) -> list[bytes]:
    start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return [
        event("content_block_start", index=index, content_block=start),
        *[
            event(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": p},
            )
            for p in pieces
        ],
        event("content_block_stop", index=index),
    ]


def finish(stop_reason: str, output_tokens: int) -> list[bytes]:
    return [
        event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        event("message_stop"),
    ]


TOOL_REPLY = [
    MESSAGE_START,
    event("ping"),
    *text_block(0, "Let me ", "check."),
    *tool_block(1, "toolu_01A", "get_weather", "", '{"ci', 'ty": "Pa', 'ris"}'),
    *tool_block(2, "toolu_01B", "get_weather", '{"city": ', '"Tokyo"}'),
    *finish("tool_use", 89),
]

TEXT_REPLY = [MESSAGE_START, *text_block(0, "Hello", ", world", "!"), *finish("end_turn", 5)]

HISTORY = [
    Message.system("You are terse."),
    Message.user("Weather in Paris and Tokyo?"),
    Message.assistant(
        "Checking.",
        [
            ToolCall("toolu_1", "get_weather", '{"city": "Paris"}'),
            ToolCall("toolu_2", "get_weather", '{"city": "Tokyo"}'),
        ],
    ),
    Message.tool("toolu_1", "sunny, 21 C", name="get_weather"),
    Message.tool("toolu_2", "rain, 14 C", name="get_weather"),
    Message.user("Which is warmer?"),
]


def backend(provider: FakeProvider, **kw: Any) -> AnthropicBackend:
    kw.setdefault("retry", FAST)
    return AnthropicBackend("claude-sonnet-4-6", api_key=FAKE_KEY, base_url=provider.url, **kw)


def test_text_and_tool_use_blocks_are_assembled(provider: FakeProvider):
    provider.queue(Reply(chunks=TOOL_REPLY))
    b = backend(provider)
    events = collect(lambda: b.chat_stream(HISTORY, [WEATHER]))
    assert events == [
        TextDelta("Let me "),
        TextDelta("check."),
        ToolCallsReady(
            [
                ToolCall("toolu_01A", "get_weather", '{"city": "Paris"}'),
                ToolCall("toolu_01B", "get_weather", '{"city": "Tokyo"}'),
            ]
        ),
        UsageReport(Usage(472, 89)),
        Done("tool_calls"),
    ]


def test_request_body_moves_system_and_merges_tool_results(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    params = GenerationParams(max_tokens=256, temperature=0.3, stop=("END",))
    events = collect(lambda: b.chat_stream(HISTORY, [WEATHER], params))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello, world!"
    assert events[-1] == Done("stop")
    (request,) = provider.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    sent_key = request.headers.get("x-api-key") or request.headers["authorization"]
    assert sent_key.removeprefix("Bearer ") == FAKE_KEY
    body = request.body
    assert body["model"] == "claude-sonnet-4-6"
    assert body["stream"] is True
    # Breakpoints by default: last tool, system, and the last two user messages.
    assert body["system"] == [{"type": "text", "text": "You are terse.", **CACHE}]
    assert body["max_tokens"] == 256
    assert body["temperature"] == 0.3
    assert body["stop_sequences"] == ["END"]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather of a city.",
            "input_schema": WEATHER.input_schema,
            **CACHE,
        }
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Weather in Paris and Tokyo?", **CACHE}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "get_weather",
                    "input": {"city": "Tokyo"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny, 21 C"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "rain, 14 C"},
                {"type": "text", "text": "Which is warmer?", **CACHE},
            ],
        },
    ]


def test_default_max_tokens_and_no_system_when_none_given(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider, max_tokens=1000)
    collect(lambda: b.chat_stream([Message.user("hi")]))
    body = provider.requests[0].body
    assert body["max_tokens"] == 1000
    assert "system" not in body and "tools" not in body and "temperature" not in body


def test_429_then_success_retries_with_events(provider: FakeProvider):
    limited = json_reply(
        429,
        {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
        {"retry-after": "0"},
    )
    provider.queue(limited, Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert events[0] == RetryNotice(1, 0.0, "anthropic: HTTP 429: Slow down")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello, world!"
    assert len(provider.requests) == 2


def test_overloaded_error_event_before_output_is_retried(provider: FakeProvider):
    overloaded = Reply(
        chunks=[
            sse(
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                event="error",
            )
        ]
    )
    provider.queue(overloaded, Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert [type(e) for e in events][:2] == [RetryNotice, TextDelta]
    assert events[0].reason == "anthropic: HTTP 529: Overloaded"


def test_429_forever_gives_up_after_three_retries(provider: FakeProvider):
    limited = json_reply(
        429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    )
    provider.queue(*[limited] * 5)
    b = backend(provider)
    with pytest.raises(LLMHTTPError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert str(info.value) == "anthropic: HTTP 429: Slow down (gave up after 3 retries)"
    assert len(provider.requests) == 4


def test_500_is_a_clear_error(provider: FakeProvider):
    provider.queue(
        json_reply(500, {"type": "error", "error": {"type": "api_error", "message": "Internal"}})
    )
    b = backend(provider)
    with pytest.raises(LLMHTTPError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert (info.value.status, str(info.value)) == (500, "anthropic: HTTP 500: Internal")


def test_connection_reset_mid_stream(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY, reset_after=3))
    b = backend(provider)
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for e in b.chat_stream([Message.user("hi")]):
            seen.append(e)

    with pytest.raises(LLMConnectionError) as info:
        asyncio.run(run())
    assert str(info.value).startswith("anthropic: connection lost while streaming")
    assert seen == [TextDelta("Hello")]


def test_key_never_appears_in_errors_or_repr(provider: FakeProvider):
    body = {"type": "error", "error": {"type": "authentication_error", "message": FAKE_KEY}}
    provider.queue(json_reply(401, body))
    b = backend(provider)
    assert (
        repr(b)
        == f"AnthropicBackend(model='claude-sonnet-4-6', base_url='{provider.url}', key=set)"
    )
    with pytest.raises(LLMHTTPError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert str(info.value) == "anthropic: HTTP 401: ***"
    assert FAKE_KEY not in "".join(traceback.format_exception(info.value))


def test_models_and_context_length(provider: FakeProvider):
    info = {
        "type": "model",
        "id": "claude-sonnet-4-6",
        "display_name": "Claude Sonnet 4.5",
        "created_at": "2025-09-29T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": 200000,
        "max_tokens": 64000,
    }
    page = {
        "data": [info, {**info, "id": "claude-haiku-4-5"}],
        "has_more": False,
        "first_id": "claude-sonnet-4-6",
        "last_id": "claude-haiku-4-5",
    }
    provider.queue(json_reply(200, page), json_reply(200, info))
    b = backend(provider)

    async def run() -> tuple[list[str], int | None]:
        return await b.models(), await b.context_length()

    assert asyncio.run(run()) == (["claude-haiku-4-5", "claude-sonnet-4-6"], 200000)
    assert [r.path.split("?")[0] for r in provider.requests] == [
        "/v1/models",
        "/v1/models/claude-sonnet-4-6",
    ]


def test_overloaded_error_event_after_output_is_raised_not_retried(provider: FakeProvider):
    overloaded = sse(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        event="error",
    )
    provider.queue(Reply(chunks=[MESSAGE_START, *text_block(0, "Hel"), overloaded]))
    b = backend(provider)
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for e in b.chat_stream([Message.user("hi")]):
            seen.append(e)

    with pytest.raises(LLMHTTPError) as info:
        asyncio.run(run())
    assert (info.value.status, str(info.value)) == (529, "anthropic: HTTP 529: Overloaded")
    assert seen == [TextDelta("Hel")]
    assert len(provider.requests) == 1
