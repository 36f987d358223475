"""OllamaBackend against a local server speaking Ollama's NDJSON /api/chat stream."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ollie_nb.llm import (
    Done,
    GenerationParams,
    LLMConnectionError,
    LLMHTTPError,
    Message,
    OllamaBackend,
    ReasoningDelta,
    RetryNotice,
    RetryPolicy,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    ToolDef,
    Usage,
    UsageReport,
)
from tests.support.llm_fake_provider import FakeProvider, Reply, collect, json_reply

WEATHER = ToolDef(
    "get_weather",
    "Current weather of a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def line(message: dict[str, Any] | None = None, **extra: Any) -> bytes:
    """One NDJSON line of /api/chat."""
    body = {
        "model": "llama3.1",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": "", **(message or {})},
        "done": False,
        **extra,
    }
    return (json.dumps(body) + "\n").encode()


def ndjson(*lines: bytes, **kw: Any) -> Reply:
    return Reply(chunks=list(lines), content_type="application/x-ndjson", **kw)


END = line(done=True, done_reason="stop", prompt_eval_count=26, eval_count=12)
TEXT = ndjson(line({"content": "The sky"}), line({"content": " is blue."}), END)
CALLS = ndjson(
    line(
        {
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
            ]
        }
    ),
    END,
)


def backend(provider: FakeProvider, **kw: Any) -> OllamaBackend:
    return OllamaBackend("llama3.1", host=provider.url, retry=RetryPolicy(base_delay=0.01), **kw)


def test_text_stream_usage_and_request_body(provider: FakeProvider):
    provider.queue(TEXT)
    b = backend(provider, options={"num_ctx": 8192})
    history = [
        Message.system("Be brief."),
        Message.user("Weather?"),
        Message.assistant("", [ToolCall("c1", "get_weather", '{"city": "Paris"}')]),
        Message.tool("c1", "sunny"),
        Message.user("Sky colour?"),
    ]
    events = collect(
        lambda: b.chat_stream(history, [WEATHER], GenerationParams(max_tokens=50, temperature=0))
    )
    assert events == [
        TextDelta("The sky"),
        TextDelta(" is blue."),
        UsageReport(Usage(26, 12)),
        Done("stop"),
    ]
    (request,) = provider.requests
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert request.body == {
        "model": "llama3.1",
        "stream": True,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
                ],
            },
            {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
            {"role": "user", "content": "Sky colour?"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather of a city.",
                    "parameters": WEATHER.input_schema,
                },
            }
        ],
        "options": {"num_ctx": 8192, "num_predict": 50, "temperature": 0},
    }


def test_tool_calls_arrive_as_objects_and_become_json_text(provider: FakeProvider):
    provider.queue(CALLS)
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("Weather?")], [WEATHER]))
    assert events == [
        ToolCallsReady(
            [
                ToolCall("call_0", "get_weather", '{"city": "Paris"}'),
                ToolCall("call_1", "get_weather", '{"city": "Tokyo"}'),
            ]
        ),
        UsageReport(Usage(26, 12)),
        Done("tool_calls"),
    ]


def test_429_retried_then_404_is_a_clear_error(provider: FakeProvider):
    busy = json_reply(429, {"error": "server busy"}, {"Retry-After": "0"})
    missing = json_reply(404, {"error": "model 'nope' not found, try pulling it first"})
    provider.queue(busy, TEXT, missing)
    b = backend(provider)
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert events[0] == RetryNotice(1, 0.0, "ollama: HTTP 429: server busy")
    b.set_model("nope")
    with pytest.raises(LLMHTTPError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert str(info.value) == "ollama: HTTP 404: model 'nope' not found, try pulling it first"
    assert provider.requests[-1].body["model"] == "nope"


def test_connection_errors_are_clear():
    b = OllamaBackend(host="http://127.0.0.1:9")
    with pytest.raises(LLMConnectionError) as info:
        collect(lambda: b.chat_stream([Message.user("hi")]))
    assert str(info.value).startswith("ollama: cannot reach http://127.0.0.1:9")


def test_reset_mid_stream(provider: FakeProvider):
    provider.queue(ndjson(line({"content": "The sky"}), END, reset_after=1))
    b = backend(provider)
    with pytest.raises(LLMConnectionError, match="connection lost while streaming"):
        collect(lambda: b.chat_stream([Message.user("hi")]))


@pytest.mark.anyio
async def test_models_and_context_length(provider: FakeProvider):
    tags = {"models": [{"name": "llama3.1:latest"}, {"name": "qwen3:8b"}]}
    show = {
        "parameters": 'stop "<|eot_id|>"\nnum_ctx 16384',
        "model_info": {"llama.context_length": 131072},
    }
    provider.queue(json_reply(200, tags), json_reply(200, show))
    b = backend(provider)

    async def run() -> tuple[list[str], int | None]:
        return await b.models(), await b.context_length()

    assert (await run()) == (["llama3.1:latest", "qwen3:8b"], 16384)
    assert provider.requests[1].body == {"model": "llama3.1"}
    assert repr(b) == f"OllamaBackend(model='llama3.1', host='{provider.url}')"


def test_native_thinking_streams_apart_and_think_is_asked_for(provider: FakeProvider):
    provider.queue(
        ndjson(
            line({"thinking": "Blue light scatters "}),
            line({"thinking": "more."}),
            line({"content": "Rayleigh scattering."}),
            END,
        )
    )
    b = backend(provider)
    params = GenerationParams(
        reasoning_effort="medium", top_k=40, min_p=0.05, max_completion_tokens=300
    )
    events = collect(lambda: b.chat_stream([Message.user("Why is the sky blue?")], (), params))
    assert events == [
        ReasoningDelta("Blue light scatters "),
        ReasoningDelta("more."),
        TextDelta("Rayleigh scattering."),
        UsageReport(Usage(26, 12)),
        Done("stop"),
    ]
    body = provider.requests[0].body
    assert body["think"] is True
    assert (body["options"]["top_k"], body["options"]["min_p"]) == (40, 0.05)
    assert body["options"]["num_predict"] == 300


def test_reasoning_effort_none_turns_thinking_off(provider: FakeProvider):
    provider.queue(TEXT, TEXT)
    b = backend(provider)
    collect(
        lambda: b.chat_stream([Message.user("hi")], (), GenerationParams(reasoning_effort="none"))
    )
    collect(lambda: b.chat_stream([Message.user("hi")]))
    off, default = (r.body for r in provider.requests)
    assert off["think"] is False
    assert "think" not in default  # the model's own default
