"""Canonical types, retry policy and redaction."""

from __future__ import annotations

import email.utils
import json
import subprocess
import sys

import pytest

from ollie_nb.llm import (
    AnthropicBackend,
    Backend,
    Done,
    GenerationParams,
    LLMError,
    LLMHTTPError,
    Message,
    OfflineBackend,
    OllamaBackend,
    OpenAIBackend,
    ReasoningDelta,
    RetryNotice,
    RetryPolicy,
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingReady,
    ToolCall,
    ToolCallsReady,
    Usage,
    UsageReport,
    backend_secrets,
)
from ollie_nb.llm._retry import parse_retry_after, stream_with_retries
from tests.support.llm_fake_provider import FAKE_KEY


def test_messages_round_trip_through_plain_json():
    messages = [
        Message.system("sys"),
        Message.user("hi"),
        Message.assistant("", [ToolCall("c1", "read", '{"path": "a"}'), ToolCall("c2", "ls")]),
        Message.tool("c1", "contents", name="read"),
    ]
    data = json.loads(json.dumps([m.to_dict() for m in messages]))
    assert data[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "name": "read", "arguments": '{"path": "a"}'},
            {"id": "c2", "name": "ls", "arguments": "{}"},
        ],
    }
    assert data[3] == {"role": "tool", "content": "contents", "tool_call_id": "c1", "name": "read"}
    assert [Message.from_dict(d) for d in data] == messages


def test_from_dict_accepts_object_arguments_and_null_content():
    m = Message.from_dict(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "name": "f", "arguments": {"x": 1}}],
        }
    )
    assert m == Message("assistant", "", (ToolCall("c", "f", '{"x": 1}'),))


def test_message_rejects_unknown_roles_and_freezes_tool_calls():
    with pytest.raises(ValueError, match="unknown message role 'bot'"):
        Message("bot", "x")  # type: ignore[arg-type]
    m = Message("assistant", "", [ToolCall("c", "f")])  # type: ignore[arg-type]
    assert m.tool_calls == (ToolCall("c", "f"),)
    hash(m)  # frozen and hashable, so messages can be set members or dict keys


def test_generation_params_stop_is_a_tuple():
    assert GenerationParams(stop="END").stop == ("END",)
    assert GenerationParams(stop=["a", "b"]).stop == ("a", "b")  # type: ignore[arg-type]
    assert Usage(3, 4).total_tokens == 7


def test_every_backend_satisfies_the_protocol():
    backends = [
        OpenAIBackend(base_url="http://127.0.0.1:1/v1"),
        AnthropicBackend(api_key=FAKE_KEY),
        OllamaBackend(),
    ]
    assert all(isinstance(b, Backend) for b in backends)
    assert [b.name for b in backends] == ["openai", "anthropic", "ollama"]


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=1_000_000) == 30.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_retry_policy_caps_and_backs_off():
    policy = RetryPolicy(base_delay=1.0, max_delay=60.0)
    assert [policy.delay(n, None) for n in range(3)] == [1.0, 2.0, 4.0]
    assert policy.delay(0, 3600.0) == 60.0
    assert policy.delay(0, 5.0) == 5.0


@pytest.mark.anyio
async def test_rate_limit_after_output_is_not_retried():
    attempts = 0

    async def attempt():
        nonlocal attempts
        attempts += 1
        yield TextDelta("partial")
        raise LLMHTTPError("x: HTTP 429", status=429)

    async def run() -> list[StreamEvent]:
        seen = []
        with pytest.raises(LLMHTTPError):
            async for event in stream_with_retries(attempt, RetryPolicy(base_delay=0)):
                seen.append(event)
        return seen

    assert (await run()) == [TextDelta("partial")]
    assert attempts == 1


def test_error_messages_are_redacted():
    err = LLMError(f"bad key {FAKE_KEY} and again {FAKE_KEY}", secrets=[FAKE_KEY, None, ""])
    assert str(err) == "bad key *** and again ***"
    assert err.message == str(err)


@pytest.mark.slow
def test_importing_the_package_loads_no_provider_sdk():
    code = (
        "import sys, ollie_nb.llm; "
        "print(sorted(m for m in ('openai', 'anthropic', 'httpx', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_overlapping_secrets_are_redacted_longest_first():
    """A key and its own prefix (or a key inside a longer token): nothing of either is left."""
    short, long = "sk-abc123", "sk-abc123-EXTENDED-PART"
    text = f"long {long} short {short}"
    expected = "long *** short ***"
    assert LLMError(text, secrets=[short, long]).message == expected
    assert LLMError(text, secrets=[long, short]).message == expected


def test_tool_call_accepts_a_dict_and_gets_an_id():
    call = ToolCall(name="execute_code", arguments={"code": "ls é", "n": 1})
    assert call.name == "execute_code"
    assert json.loads(call.arguments) == {"code": "ls é", "n": 1}
    assert call.arguments == '{"code": "ls é", "n": 1}'
    assert call.id.startswith("call_") and len(call.id) == len("call_") + 16
    assert ToolCall(name="ls").id != ToolCall(name="ls").id  # fresh per call
    assert ToolCall(name="ls").arguments == "{}"
    assert ToolCall("c1", "read", '{"path": "a"}') == ToolCall(
        id="c1", name="read", arguments={"path": "a"}
    )
    assert ToolCall(id="x", arguments={}) == ToolCall("x", "", "{}")  # a model may send that
    with pytest.raises(TypeError, match="JSON text or a dict, got list"):
        ToolCall(name="x", arguments=[1, 2])


def test_remote_backends_expose_their_secrets_publicly():
    assert OpenAIBackend("m", api_key=FAKE_KEY).secrets() == (FAKE_KEY,)
    assert OpenAIBackend("m", base_url="http://127.0.0.1:1/v1").secrets() == ()
    assert backend_secrets(OpenAIBackend("m", api_key=FAKE_KEY)) == (FAKE_KEY,)
    assert OllamaBackend("m", "http://me:pa55word@127.0.0.1:11434").secrets() == ("pa55word",)
    assert backend_secrets(OfflineBackend()) == ()  # the offline model holds no key


SIGNED_REPLY = Message.assistant(
    "Paris is sunny.",
    [ToolCall("c1", "get_weather", '{"city": "Paris"}')],
    [
        ThinkingBlock("thinking", "Check the weather first.", "c2lnbmF0dXJl"),
        ThinkingBlock("redacted_thinking", data="ZW5jcnlwdGVk"),
    ],
)


def test_thinking_round_trips_through_saved_sessions_apart_from_the_content():
    data = json.loads(json.dumps(SIGNED_REPLY.to_dict()))
    assert data["content"] == "Paris is sunny."
    assert data["thinking"] == [
        {"type": "thinking", "thinking": "Check the weather first.", "signature": "c2lnbmF0dXJl"},
        {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
    ]
    assert Message.from_dict(data) == SIGNED_REPLY
    assert "thinking" not in Message.assistant("plain").to_dict()


def test_only_the_anthropic_builder_sends_thinking_back():
    from ollie_nb.llm._anthropic import anthropic_messages
    from ollie_nb.llm._ollama import ollama_messages
    from ollie_nb.llm._openai import openai_messages

    history = [Message.user("Weather?"), SIGNED_REPLY]
    for converted in (openai_messages(history), ollama_messages(history)):
        assert "Check the weather" not in json.dumps(converted)
        assert "c2lnbmF0dXJl" not in json.dumps(converted)
    _, anthropic = anthropic_messages(history)
    assert [b["type"] for b in anthropic[1]["content"]] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]


def test_stream_events_are_one_type_per_kind():
    events: list[StreamEvent] = [
        TextDelta("a"),
        ReasoningDelta("b"),
        ToolCallsReady([ToolCall("c", "f")]),
        ThinkingReady([ThinkingBlock()]),
        UsageReport(Usage(1, 2, cache_read_tokens=1)),
        RetryNotice(1, 0.5, "busy"),
        Done(),
    ]
    assert len({type(e) for e in events}) == len(events)
    assert events[2] == ToolCallsReady((ToolCall("c", "f"),))  # lists become tuples
    assert events[-1].stop_reason == "stop"
    assert Usage(10, 1, cache_read_tokens=8).total_tokens == 11  # cached tokens are input
