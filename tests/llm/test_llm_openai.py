"""OpenAIBackend against a local server speaking the chat.completions SSE wire format."""

from __future__ import annotations

import asyncio
import gc
import time
import traceback
from typing import Any

import pytest
from llm_fake_provider import FAKE_KEY, FakeProvider, Reply, collect, json_reply, sse

from ollie_nb.llm import (
    Done,
    GenerationParams,
    LLMConnectionError,
    LLMHTTPError,
    LLMStreamError,
    Message,
    OpenAIBackend,
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

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)

WEATHER = ToolDef(
    "get_weather",
    "Current weather of a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolDef("get_time", "Local time of a city.", {"type": "object", "properties": {}})


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    """One chat.completion.chunk as the server sends it."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-4o-mini",
        "choices": choices,
        **extra,
    }
    return sse(body)


def call_delta(index: int, args: str, call_id: str | None = None, name: str | None = None):
    """A delta carrying one piece of tool call `index`."""
    piece: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id:
        piece["id"] = call_id
        piece["type"] = "function"
        piece["function"]["name"] = name
    return chunk({"tool_calls": [piece]})


USAGE_CHUNK = chunk(None, usage={"prompt_tokens": 57, "completion_tokens": 17, "total_tokens": 74})
DONE = sse("[DONE]")

TWO_CALLS = [
    chunk({"role": "assistant", "content": None}),
    call_delta(0, "", "call_aaa", "get_weather"),
    call_delta(0, '{"ci'),
    call_delta(1, "", "call_bbb", "get_time"),
    call_delta(0, 'ty": "Par'),
    call_delta(1, '{"city":'),
    call_delta(0, 'is"}'),
    call_delta(1, ' "Tokyo"}'),
    chunk({}, "tool_calls"),
    USAGE_CHUNK,
    DONE,
]

TEXT_REPLY = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Hello"}),
    chunk({"content": ", world"}),
    chunk({"content": "!"}),
    chunk({}, "stop"),
    USAGE_CHUNK,
    DONE,
]

HISTORY = [
    Message.system("You are terse."),
    Message.user("Weather in Paris?"),
    Message.assistant("Checking.", [ToolCall("call_1", "get_weather", '{"city": "Paris"}')]),
    Message.tool("call_1", "sunny, 21 C", name="get_weather"),
    Message.user("And now?"),
]


def backend(provider: FakeProvider, **kw: Any) -> OpenAIBackend:
    kw.setdefault("retry", FAST)
    return OpenAIBackend("gpt-4o-mini", base_url=provider.url + "/v1", api_key=FAKE_KEY, **kw)


def test_parallel_tool_calls_are_assembled_from_interleaved_deltas(provider: FakeProvider):
    provider.queue(Reply(chunks=TWO_CALLS))
    b = backend(provider)
    events = collect(lambda: b.chat_stream(HISTORY, [WEATHER, TIME]))
    assert events == [
        ToolCallsReady(
            [
                ToolCall("call_aaa", "get_weather", '{"city": "Paris"}'),
                ToolCall("call_bbb", "get_time", '{"city": "Tokyo"}'),
            ]
        ),
        UsageReport(Usage(57, 17)),
        Done("tool_calls"),
    ]


def test_request_body_carries_converted_messages_tools_and_params(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    params = GenerationParams(max_tokens=64, temperature=0.2, top_p=0.9, stop=("END",))
    collect(lambda: b.chat_stream(HISTORY, [WEATHER], params))
    (request,) = provider.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    body = request.body
    assert body["model"] == "gpt-4o-mini"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"},
        {"role": "user", "content": "And now?"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather of a city.",
                "parameters": WEATHER.input_schema,
            },
        }
    ]
    assert body["max_tokens"] == 64
    assert body["temperature"] == 0.2
    assert body["top_p"] == 0.9
    assert body["stop"] == ["END"]
    assert "frequency_penalty" not in body and "presence_penalty" not in body


def test_text_reply_streams_deltas_then_usage_and_done(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", world", "!"]
    assert events[-2:] == [UsageReport(Usage(57, 17)), Done("stop")]


def test_429_with_retry_after_is_retried_with_events(provider: FakeProvider):
    limited = json_reply(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "1"})
    provider.queue(limited, limited, Reply(chunks=TEXT_REPLY))
    b = backend(provider, retry=RetryPolicy(base_delay=0.01, max_delay=0.05))
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    retries = [e for e in events if isinstance(e, RetryNotice)]
    assert [(e.attempt, e.delay) for e in retries] == [(1, 0.05), (2, 0.05)]  # capped
    assert "Rate limit reached" in retries[0].reason
    assert events[: len(retries)] == retries  # retries come before anything else
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello, world!"
    assert len(provider.requests) == 3


def test_429_forever_gives_up_after_three_retries(provider: FakeProvider):
    limited = json_reply(429, {"error": {"message": "Rate limit reached"}})
    provider.queue(*[limited] * 5)
    b = backend(provider)
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for event in b.chat_stream([Message.user("hi")]):
            seen.append(event)

    with pytest.raises(LLMHTTPError) as info:
        asyncio.run(run())
    assert info.value.status == 429
    assert str(info.value) == ("openai: HTTP 429: Rate limit reached (gave up after 3 retries)")
    assert [e.delay for e in seen] == [0.01, 0.02, 0.04]  # exponential backoff
    assert len(provider.requests) == 4


def test_500_is_a_clear_error_without_retry(provider: FakeProvider):
    provider.queue(json_reply(500, {"error": {"message": "The server had an error"}}))
    b = backend(provider)
    with pytest.raises(LLMHTTPError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert info.value.status == 500
    assert str(info.value) == "openai: HTTP 500: The server had an error"
    assert len(provider.requests) == 1


def test_connection_reset_mid_stream_is_a_connection_error(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY, reset_after=2))
    b = backend(provider)
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for event in b.chat_stream([Message.user("hi")]):
            seen.append(event)

    with pytest.raises(LLMConnectionError) as info:
        asyncio.run(run())
    assert "openai" in str(info.value)
    assert seen == [TextDelta("Hello")]
    assert len(provider.requests) == 1  # never retried once text has streamed


def test_key_never_appears_in_errors_or_repr(provider: FakeProvider):
    echo = {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}"}}
    provider.queue(json_reply(401, echo))
    b = backend(provider)
    assert FAKE_KEY not in repr(b)
    assert repr(b) == (f"OpenAIBackend(model='gpt-4o-mini', base_url='{provider.url}/v1', key=set)")
    with pytest.raises(LLMHTTPError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    rendered = "".join(traceback.format_exception(info.value))
    assert info.value.status == 401
    assert "Incorrect API key provided: ***" in str(info.value)
    assert FAKE_KEY not in rendered and FAKE_KEY not in repr(info.value)


def test_cancelling_the_consumer_closes_the_stream(provider: FakeProvider):
    # Two chunks, then the server keeps the response open: the client must hang up.
    provider.queue(Reply(chunks=TEXT_REPLY[:2], hold_open=True))
    b = backend(provider)
    got: list[str] = []

    async def run() -> None:
        async def consume() -> None:
            async for event in b.chat_stream([Message.user("hi")]):
                if isinstance(event, TextDelta):
                    got.append(event.text)

        task = asyncio.create_task(consume())
        while not got:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(run(), 5))
    assert got == ["Hello"]
    deadline = time.monotonic() + 5
    while provider.hangups == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert provider.hangups == 1


def test_models_and_context_length_from_models_listing(provider: FakeProvider):
    listing = {
        "object": "list",
        "data": [
            {"id": "qwen2.5-7b", "object": "model", "created": 0, "max_model_len": 32768},
            {"id": "gpt-4o-mini", "object": "model", "created": 0, "context_length": 128000},
        ],
    }
    provider.queue(json_reply(200, listing), json_reply(200, listing), json_reply(200, listing))
    b = backend(provider)

    async def run() -> tuple[list[str], int | None, int | None, int | None]:
        names = await b.models()
        mini = await b.context_length()
        again = await b.context_length()  # cached: no request
        b.set_model("qwen2.5-7b")
        return names, mini, again, await b.context_length()

    assert asyncio.run(run()) == (["gpt-4o-mini", "qwen2.5-7b"], 128000, 128000, 32768)
    assert [r.path for r in provider.requests] == ["/v1/models"] * 3


def test_one_backend_serves_several_event_loops(provider: FakeProvider, caplog):
    # A script may call asyncio.run once per turn; each loop gets its own HTTP client.
    provider.queue(Reply(chunks=TEXT_REPLY), Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    first = collect(lambda: b.chat_stream([Message.user("one")]))
    second = collect(lambda: b.chat_stream([Message.user("two")]))
    gc.collect()
    assert first == second
    assert [r.body["messages"][0]["content"] for r in provider.requests] == ["one", "two"]
    assert not [r for r in caplog.records if r.name == "asyncio"]


def test_error_object_inside_the_stream_is_a_stream_error(provider: FakeProvider):
    # OpenRouter reports upstream failures as a data line with an `error` object.
    failure = sse({"error": {"message": "Upstream provider failed", "code": 502}})
    provider.queue(Reply(chunks=[*TEXT_REPLY[:2], failure]))
    b = backend(provider)
    with pytest.raises(LLMStreamError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert str(info.value) == "openai: Upstream provider failed"
