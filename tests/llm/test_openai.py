"""OpenAIBackend against a local server speaking the chat.completions SSE wire format."""

from __future__ import annotations

import asyncio
import gc
import json
import traceback
from typing import Any

import pytest

from ollie_nb.llm import (
    ContextOverflowError,
    Done,
    GenerationParams,
    LLMConnectionError,
    LLMHTTPError,
    LLMStreamError,
    Message,
    OpenAIBackend,
    ReasoningDelta,
    RetryNotice,
    RetryPolicy,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    ToolDef,
    ToolUseFailedError,
    Usage,
    UsageReport,
)
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply, collect, json_reply, sse
from tests.support.waits import until

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


def unindexed_delta(args: str, call_id: str | None = None, name: str | None = None) -> bytes:
    """A tool-call delta as servers that leave out `index` send it (an id opens a call)."""
    piece: dict[str, Any] = {"function": {"arguments": args}}
    if call_id:
        piece.update(id=call_id, type="function")
        piece["function"]["name"] = name
    return chunk({"tool_calls": [piece]})


def test_parallel_calls_without_index_are_told_apart_by_their_ids(provider: FakeProvider):
    provider.queue(
        Reply(
            chunks=[
                unindexed_delta('{"p": ', "call_p", "get_weather"),
                unindexed_delta("1}"),
                unindexed_delta('{"f": 2}', "call_f", "get_time"),
                chunk({}, "tool_calls"),
                DONE,
            ]
        )
    )
    b = backend(provider)
    events = collect(lambda: b.chat_stream(HISTORY, [WEATHER, TIME]))
    assert events[0] == ToolCallsReady(
        [ToolCall("call_p", "get_weather", '{"p": 1}'), ToolCall("call_f", "get_time", '{"f": 2}')]
    )


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


@pytest.mark.anyio
async def test_429_forever_gives_up_after_three_retries(provider: FakeProvider):
    limited = json_reply(429, {"error": {"message": "Rate limit reached"}})
    provider.queue(*[limited] * 5)
    b = backend(provider)
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for event in b.chat_stream([Message.user("hi")]):
            seen.append(event)

    with pytest.raises(LLMHTTPError) as info:
        await run()
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


@pytest.mark.anyio
async def test_connection_reset_mid_stream_is_a_connection_error(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY, reset_after=2))
    b = backend(provider)
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for event in b.chat_stream([Message.user("hi")]):
            seen.append(event)

    with pytest.raises(LLMConnectionError) as info:
        await run()
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


@pytest.mark.anyio
async def test_cancelling_the_consumer_closes_the_stream(provider: FakeProvider):
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

    await asyncio.wait_for(run(), 5)
    assert got == ["Hello"]
    await until(lambda: provider.hangups > 0, 5, "the provider's hang-up")
    assert provider.hangups == 1


@pytest.mark.anyio
async def test_models_and_context_length_from_models_listing(provider: FakeProvider):
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

    assert (await run()) == (["gpt-4o-mini", "qwen2.5-7b"], 128000, 128000, 32768)
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


# -- reasoning, prompt caching, provider errors a model can recover from -------------------


def test_deepseek_reasoning_content_streams_apart_from_the_reply(provider: FakeProvider):
    provider.queue(
        Reply(
            chunks=[
                chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
                chunk({"content": None, "reasoning_content": "The user says hi. "}),
                chunk({"content": None, "reasoning_content": "Greet back."}),
                chunk({"content": "Hello!", "reasoning_content": None}),
                chunk({"content": ""}, "stop"),
                USAGE_CHUNK,
                DONE,
            ]
        )
    )
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert events == [
        ReasoningDelta("The user says hi. "),
        ReasoningDelta("Greet back."),
        TextDelta("Hello!"),
        UsageReport(Usage(57, 17)),
        Done("stop"),
    ]


def test_openrouter_and_groq_reasoning_field(provider: FakeProvider):
    provider.queue(
        Reply(
            chunks=[
                chunk({"role": "assistant", "content": "", "reasoning": "Short answer."}),
                chunk({"content": "Yes.", "reasoning": None}),
                chunk({}, "stop"),
                DONE,
            ]
        )
    )
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("ok?")]))
    assert events == [ReasoningDelta("Short answer."), TextDelta("Yes."), Done("stop")]


def test_cached_prompt_tokens_and_cost_are_read_into_usage(provider: FakeProvider):
    usage = {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
        "cost": 0.00123,
    }
    provider.queue(Reply(chunks=[*TEXT_REPLY[:-2], chunk(None, usage=usage), DONE]))
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert events[-2] == UsageReport(Usage(2006, 300, cache_read_tokens=1920, cost=0.00123))


def test_reasoning_and_sampling_settings_reach_the_request(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY))
    b = backend(provider)
    params = GenerationParams(
        reasoning_effort="high", max_completion_tokens=4096, top_k=20, min_p=0.05
    )
    collect(lambda: b.chat_stream([Message.user("hi")], (), params))
    body = provider.requests[0].body
    assert body["reasoning_effort"] == "high"
    assert body["max_completion_tokens"] == 4096
    assert (body["top_k"], body["min_p"]) == (20, 0.05)


def openrouter(provider: FakeProvider, model: str) -> OpenAIBackend:
    return OpenAIBackend(
        model, base_url=provider.url + "/v1", api_key=FAKE_KEY, name="openrouter", retry=FAST
    )


def test_openrouter_anthropic_models_get_cache_breakpoints(provider: FakeProvider):
    provider.queue(Reply(chunks=TEXT_REPLY), Reply(chunks=TEXT_REPLY), Reply(chunks=TEXT_REPLY))
    claude = openrouter(provider, "anthropic/claude-sonnet-4")
    collect(lambda: claude.chat_stream(HISTORY, [WEATHER, TIME]))
    collect(
        lambda: claude.chat_stream(HISTORY, [WEATHER, TIME], GenerationParams(prompt_cache=False))
    )
    gpt = openrouter(provider, "openai/gpt-4o-mini")
    collect(lambda: gpt.chat_stream(HISTORY, [WEATHER, TIME]))
    cached, off, other = (r.body for r in provider.requests)
    mark = {"cache_control": {"type": "ephemeral"}}
    messages = cached["messages"]
    assert messages[0]["content"] == [{"type": "text", "text": "You are terse.", **mark}]
    assert messages[3]["content"] == [{"type": "text", "text": "sunny, 21 C", **mark}]
    assert messages[4]["content"] == [{"type": "text", "text": "And now?", **mark}]
    assert messages[1]["content"] == "Weather in Paris?"  # only the last two user/tool ones
    assert [("cache_control" in t) for t in cached["tools"]] == [False, True]
    assert "cache_control" not in json.dumps(off) and "cache_control" not in json.dumps(other)


# Groq, when the model's tool call breaks the schema: an error object inside the stream.
GROQ_TOOL_USE_FAILED = {
    "error": {
        "message": (
            "Failed to call a function. Please adjust your prompt. "
            "See 'failed_generation' for more details."
        ),
        "type": "invalid_request_error",
        "code": "tool_use_failed",
        "failed_generation": '<function=get_weather{"city": Paris}</function>',
    }
}


def test_groq_tool_use_failed_in_the_stream_is_a_typed_error(provider: FakeProvider):
    provider.queue(
        Reply(chunks=[chunk({"role": "assistant", "content": None}), sse(GROQ_TOOL_USE_FAILED)])
    )
    b = backend(provider)
    with pytest.raises(ToolUseFailedError) as info:
        collect(lambda: b.chat_stream([Message.user("Weather?")], [WEATHER]))
    assert info.value.failed_generation == '<function=get_weather{"city": Paris}</function>'
    assert str(info.value).startswith("openai: Failed to call a function.")


def test_groq_tool_use_failed_as_http_400_is_the_same_error(provider: FakeProvider):
    provider.queue(json_reply(400, GROQ_TOOL_USE_FAILED))
    b = backend(provider)
    with pytest.raises(ToolUseFailedError) as info:
        collect(lambda: b.chat_stream([Message.user("Weather?")], [WEATHER]))
    assert "get_weather" in info.value.failed_generation


@pytest.mark.parametrize(
    "error",
    [
        {  # OpenAI
            "message": (
                "This model's maximum context length is 128000 tokens. However, your "
                "messages resulted in 130412 tokens. Please reduce the length of the messages."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        },
        {  # OpenRouter
            "message": (
                "This endpoint's maximum context length is 200000 tokens. However, you "
                "requested about 231544 tokens (223352 of text input, 8192 in the output). "
                'Please reduce the length of either one, or use the "middle-out" transform.'
            ),
            "code": 400,
            "metadata": {"provider_name": None},
        },
        {  # llama.cpp server
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
        },
    ],
    ids=["openai", "openrouter", "llama.cpp"],
)
def test_context_length_exceeded_is_a_context_overflow(provider: FakeProvider, error):
    provider.queue(json_reply(400, {"error": error}))
    b = backend(provider)
    with pytest.raises(ContextOverflowError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert info.value.status == 400
    assert len(provider.requests) == 1


def test_openrouter_token_limit_chunk_in_a_200_stream_stays_that_error(provider: FakeProvider):
    # OpenRouter ends a 200 stream whose upstream hit its limit with an error chunk.
    limit = {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "deepseek/deepseek-chat",
        "error": {"code": 400, "message": "Token limit reached"},
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "length"}],
    }
    provider.queue(Reply(chunks=[*TEXT_REPLY[:3], sse(limit)]))
    b = openrouter(provider, "deepseek/deepseek-chat")
    with pytest.raises(LLMStreamError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert str(info.value) == "openrouter: Token limit reached"
    assert not isinstance(info.value, ContextOverflowError)
