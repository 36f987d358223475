"""AnthropicBackend against a local server speaking the Messages API SSE wire format."""

from __future__ import annotations

import json
import traceback
from typing import Any

import pytest

from ollie_nb.llm import (
    AnthropicBackend,
    ContextOverflowError,
    Done,
    GenerationParams,
    LLMConnectionError,
    LLMHTTPError,
    Message,
    ReasoningDelta,
    RetryNotice,
    RetryPolicy,
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingReady,
    ToolCall,
    ToolCallsReady,
    ToolDef,
    Usage,
    UsageReport,
)
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply, collect, json_reply, sse

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


@pytest.mark.anyio
async def test_connection_reset_mid_stream(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY, reset_after=3))
    b = backend(provider)
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for e in b.chat_stream([Message.user("hi")]):
            seen.append(e)

    with pytest.raises(LLMConnectionError) as info:
        await run()
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


@pytest.mark.anyio
async def test_models_and_context_length(provider: FakeProvider):
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

    assert (await run()) == (["claude-haiku-4-5", "claude-sonnet-4-6"], 200000)
    assert [r.path.split("?")[0] for r in provider.requests] == [
        "/v1/models",
        "/v1/models/claude-sonnet-4-6",
    ]


@pytest.mark.anyio
async def test_overloaded_error_event_after_output_is_raised_not_retried(provider: FakeProvider):
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
        await run()
    assert (info.value.status, str(info.value)) == (529, "anthropic: HTTP 529: Overloaded")
    assert seen == [TextDelta("Hel")]
    assert len(provider.requests) == 1


# -- extended thinking, prompt caching, context overflow -----------------------------------

SIGNATURE = "EqQBCkgIBxABGAIqQGBo0wYDHPl1u7c1zgxGcjBQ7CGiPxdcOXYp/vnBUq1K3ZgUTxsQaCLHt3Ir+Qe4wA=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ"


def thinking_block(index: int, signature: str, *pieces: str) -> list[bytes]:
    start = {"type": "thinking", "thinking": "", "signature": ""}
    return [
        event("content_block_start", index=index, content_block=start),
        *[
            event(
                "content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": p}
            )
            for p in pieces
        ],
        event(
            "content_block_delta",
            index=index,
            delta={"type": "signature_delta", "signature": signature},
        ),
        event("content_block_stop", index=index),
    ]


def redacted_block(index: int, data: str) -> list[bytes]:
    return [
        event(
            "content_block_start",
            index=index,
            content_block={"type": "redacted_thinking", "data": data},
        ),
        event("content_block_stop", index=index),
    ]


def cached_start(input_tokens: int, written: int, read: int) -> bytes:
    usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "output_tokens": 1,
    }
    message = {
        "id": "msg_02",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return event("message_start", message=message)


THINK_THEN_CALL = [
    cached_start(12, 1800, 2400),
    *thinking_block(0, SIGNATURE, "The user wants Paris weather. ", "I should call the tool."),
    *redacted_block(1, REDACTED),
    *tool_block(2, "toolu_01T", "get_weather", '{"city": "Paris"}'),
    *finish("tool_use", 140),
]

SIGNED = (
    ThinkingBlock("thinking", "The user wants Paris weather. I should call the tool.", SIGNATURE),
    ThinkingBlock("redacted_thinking", data=REDACTED),
)


def test_thinking_streams_apart_and_its_signed_blocks_come_whole(provider: FakeProvider):
    provider.queue(Reply(chunks=THINK_THEN_CALL))
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("Weather in Paris?")], [WEATHER]))
    assert events == [
        ReasoningDelta("The user wants Paris weather. "),
        ReasoningDelta("I should call the tool."),
        ToolCallsReady((ToolCall("toolu_01T", "get_weather", '{"city": "Paris"}'),)),
        ThinkingReady(SIGNED),
        UsageReport(Usage(4212, 140, cache_read_tokens=2400, cache_write_tokens=1800)),
        Done("tool_calls"),
    ]
    assert not [e for e in events if isinstance(e, TextDelta)]  # thinking is never reply text


def test_thinking_blocks_go_back_first_and_unchanged(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    history = [
        Message.user("Weather in Paris?"),
        Message.assistant("", [ToolCall("toolu_01T", "get_weather", '{"city": "Paris"}')], SIGNED),
        Message.tool("toolu_01T", "sunny, 21 C", name="get_weather"),
    ]
    params = GenerationParams(thinking_budget=4000, max_tokens=2000, temperature=0.5, top_k=40)
    collect(lambda: b.chat_stream(history, [WEATHER], params))
    (request,) = provider.requests
    body = request.body
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": SIGNED[0].thinking, "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": REDACTED},
            {
                "type": "tool_use",
                "id": "toolu_01T",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
    }
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert body["max_tokens"] > 4000  # the API wants room for the answer beyond the budget
    assert "temperature" not in body and "top_k" not in body  # refused with thinking on
    assert "interleaved-thinking" in request.headers["anthropic-beta"]


def test_max_tokens_equal_to_the_thinking_budget_is_raised_above_it(provider: FakeProvider):
    """The API refuses max_tokens <= budget_tokens: the answer's room is added to the budget."""
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    params = GenerationParams(thinking_budget=4000, max_tokens=4000)
    collect(lambda: b.chat_stream([Message.user("hi")], [], params))
    body = provider.requests[0].body
    assert body["thinking"]["budget_tokens"] == 4000
    assert body["max_tokens"] == 4000 + 8192  # the budget plus the backend's usual room


def test_no_thinking_settings_without_a_budget(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    collect(lambda: b.chat_stream([Message.user("hi")], (), GenerationParams(top_k=40)))
    body = provider.requests[0].body
    assert "thinking" not in body and body["top_k"] == 40
    assert "anthropic-beta" not in provider.requests[0].headers


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where a request's cache_control marks are, in the order the cache reads them."""
    found = [f"tool:{t['name']}" for t in body.get("tools", ()) if "cache_control" in t]
    found += ["system" for s in body.get("system", ()) if "cache_control" in s]
    for n, m in enumerate(body["messages"]):
        found += [f"{m['role']}[{n}]:{b['type']}" for b in m["content"] if "cache_control" in b]
    return found


def test_cache_breakpoints_on_tools_system_and_the_tail_within_four(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY), Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    tools = [WEATHER, ToolDef("get_time", "Local time.")]
    long = [
        *HISTORY,
        Message.assistant("", [ToolCall("toolu_3", "get_time", "{}")]),
        Message.tool("toolu_3", "10:00", name="get_time"),
    ]
    collect(lambda: b.chat_stream(long, tools))
    collect(lambda: b.chat_stream(long, tools, GenerationParams(prompt_cache=False)))
    cached, plain = (r.body for r in provider.requests)
    assert breakpoints(cached) == [
        "tool:get_time",
        "system",
        "user[2]:text",  # the previous request's tail ("Which is warmer?")
        "user[4]:tool_result",  # this request's tail
    ]
    assert "cache_control" not in json.dumps(plain)


def test_prompt_too_long_is_a_context_overflow(provider: FakeProvider):
    too_long = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 208934 tokens > 200000 maximum",
        },
    }
    provider.queue(json_reply(400, too_long))
    b = backend(provider)
    with pytest.raises(ContextOverflowError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert str(info.value) == (
        "anthropic: HTTP 400: prompt is too long: 208934 tokens > 200000 maximum"
    )
    assert len(provider.requests) == 1


def test_other_invalid_requests_stay_plain_http_errors(provider: FakeProvider):
    bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad tool"}}
    provider.queue(json_reply(400, bad))
    b = backend(provider)
    with pytest.raises(LLMHTTPError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert not isinstance(info.value, ContextOverflowError)
