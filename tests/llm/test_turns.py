"""Whole turns through AgentCore against the fake provider, in each provider's wire format:
signed thinking across a tool loop, a refused tool call told to the model, a context
overflow compacted and retried, and agent-file settings reaching the request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import tests.llm.test_anthropic as anthropic_wire
import tests.llm.test_openai as openai_wire
from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.core._compact import COMPACT_PROMPT
from ollie_nb.llm import AnthropicBackend, OpenAIBackend, RetryPolicy, Usage, priced
from tests.conftest import MakeCore
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply, json_reply, sse

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)
THOUGHT = json.dumps({"thought": "check first"})


async def submit(core: AgentCore, prompt: str) -> Any:
    return await asyncio.wait_for(core.submit(prompt), 60)


async def anthropic_core(make_core: MakeCore, provider: FakeProvider, **agent: Any) -> AgentCore:
    backend = AnthropicBackend(
        "claude-sonnet-4-6", api_key=FAKE_KEY, base_url=provider.url, retry=FAST
    )
    return await make_core(backend, agent=AgentConfig.from_dict(agent))


async def openai_core(
    make_core: MakeCore, provider: FakeProvider, name: str = "openai", **agent: Any
) -> AgentCore:
    backend = OpenAIBackend(
        "gpt-4o-mini", base_url=provider.url + "/v1", api_key=FAKE_KEY, name=name, retry=FAST
    )
    return await make_core(backend, agent=AgentConfig.from_dict(agent))


def openai_text(*pieces: str) -> Reply:
    chunk = openai_wire.chunk
    return Reply(
        chunks=[
            chunk({"role": "assistant", "content": ""}),
            *[chunk({"content": p}) for p in pieces],
            chunk({}, "stop"),
            openai_wire.USAGE_CHUNK,
            openai_wire.DONE,
        ]
    )


def openai_think_call(call_id: str) -> Reply:
    return Reply(
        chunks=[
            openai_wire.call_delta(0, "", call_id, "reasoning_think"),
            openai_wire.call_delta(0, THOUGHT),
            openai_wire.chunk({}, "tool_calls"),
            openai_wire.DONE,
        ]
    )


# -- Anthropic: thinking with signatures across a tool loop -------------------------------


@pytest.mark.anyio
async def test_signed_thinking_goes_back_with_the_tool_results_and_never_into_text(
    make_core, provider: FakeProvider
):
    wire = anthropic_wire
    thinking_call = [
        wire.cached_start(12, 1800, 0),
        *wire.thinking_block(0, wire.SIGNATURE, "I will think with the tool first."),
        *wire.redacted_block(1, wire.REDACTED),
        *wire.tool_block(2, "toolu_01T", "reasoning_think", THOUGHT),
        *wire.finish("tool_use", 60),
    ]
    answer = [
        wire.cached_start(20, 0, 1800),
        *wire.thinking_block(0, "Sig2==", "Now answer."),
        *wire.text_block(1, "All ", "done."),
        *wire.finish("end_turn", 9),
    ]
    provider.queue(Reply(chunks=thinking_call), Reply(chunks=answer))
    core = await anthropic_core(make_core, provider, reasoning=3000)
    result = await submit(core, "Think, then answer.")
    assert (result.reply, result.error) == ("All done.", "")
    first, second = (r.body for r in provider.requests)
    assert first["thinking"] == second["thinking"] == {"type": "enabled", "budget_tokens": 3000}
    sent_back = second["messages"][1]
    assert sent_back["role"] == "assistant"
    assert sent_back["content"][:2] == [
        {
            "type": "thinking",
            "thinking": "I will think with the tool first.",
            "signature": wire.SIGNATURE,
        },
        {"type": "redacted_thinking", "data": wire.REDACTED},
    ]
    assert sent_back["content"][2]["type"] == "tool_use"
    assert second["messages"][2]["content"][0]["tool_use_id"] == "toolu_01T"
    contents = " ".join(m.content for m in core.history)
    assert "think with the tool" not in contents and "Now answer" not in contents
    assert core.history[-1].thinking[0].signature == "Sig2=="
    # the cache: reads and writes counted, every input token counted once
    assert core.usage.input_tokens == (12 + 1800) + (20 + 1800)
    assert (core.usage.cache_write_tokens, core.usage.cache_read_tokens) == (1800, 1800)


@pytest.mark.anyio
async def test_the_agent_file_can_turn_the_cache_off(make_core, provider: FakeProvider):
    provider.queue(Reply(chunks=anthropic_wire.TEXT_REPLY))
    core = await anthropic_core(make_core, provider, promptCache=False)
    await submit(core, "hi")
    assert "cache_control" not in json.dumps(provider.requests[0].body)


@pytest.mark.anyio
async def test_cache_breakpoints_reach_a_real_turn(make_core, provider: FakeProvider):
    provider.queue(Reply(chunks=anthropic_wire.TEXT_REPLY))
    core = await anthropic_core(make_core, provider)
    await submit(core, "hi")
    marks = anthropic_wire.breakpoints(provider.requests[0].body)
    assert marks[1:] == ["system", "user[0]:text"]
    assert marks[0].startswith("tool:") and len(marks) == 3


# -- a refused tool call (Groq's tool_use_failed) --------------------------------------------

REFUSED = Reply(
    chunks=[
        openai_wire.chunk({"role": "assistant", "content": None}),
        sse(openai_wire.GROQ_TOOL_USE_FAILED),
    ]
)


@pytest.mark.anyio
async def test_a_refused_tool_call_is_told_to_the_model_which_tries_again(
    make_core, provider: FakeProvider
):
    provider.queue(REFUSED, openai_think_call("call_ok"), openai_text("Fixed it."))
    core = await openai_core(make_core, provider, name="groq")
    result = await submit(core, "Weather in Paris?")
    assert (result.reply, result.error) == ("Fixed it.", "")
    retry = provider.requests[1].body["messages"]
    assert retry[-1]["role"] == "user"
    assert '<function=get_weather{"city": Paris}</function>' in retry[-1]["content"]
    assert "Failed to call a function" in retry[-1]["content"]
    assert provider.requests[2].body["messages"][-1]["role"] == "tool"


@pytest.mark.anyio
async def test_refused_tool_calls_are_retried_a_bounded_number_of_times(
    make_core, provider: FakeProvider
):
    provider.queue(REFUSED, REFUSED, REFUSED, openai_text("never sent"))
    core = await openai_core(make_core, provider, name="groq")
    result = await submit(core, "Weather in Paris?")
    assert result.error.startswith("groq: Failed to call a function.")
    assert len(provider.requests) == 3  # the first try and two retries


# -- context overflow -------------------------------------------------------------------------

OVERFLOW = json_reply(
    400,
    {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 130412 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
)


# Compaction asks the window once, to size what it keeps verbatim.
MODELS = json_reply(200, {"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]})


@pytest.mark.anyio
async def test_a_context_overflow_compacts_and_retries_once(make_core, provider: FakeProvider):
    summary = openai_text("We talked about the weather.")
    provider.queue(OVERFLOW, summary, MODELS, openai_text("Sure."))
    core = await openai_core(make_core, provider)
    result = await submit(core, "And now?")
    assert (result.reply, result.error) == ("Sure.", "")
    chats = [r for r in provider.requests if r.path.endswith("/chat/completions")]
    summary_request, retried = (r.body["messages"] for r in chats[1:])
    assert summary_request[-1]["content"].startswith(COMPACT_PROMPT)
    assert any("We talked about the weather." in m["content"] for m in retried)


@pytest.mark.anyio
async def test_a_second_overflow_ends_the_turn_with_the_error(make_core, provider: FakeProvider):
    provider.queue(OVERFLOW, openai_text("Summary."), MODELS, OVERFLOW)
    core = await openai_core(make_core, provider)
    result = await submit(core, "And now?")
    assert "maximum context length" in result.error
    assert [r.path for r in provider.requests].count("/v1/chat/completions") == 3


@pytest.mark.anyio
async def test_openrouter_token_limit_chunk_ends_the_turn_as_that_error(
    make_core, provider: FakeProvider
):
    limit = {"error": {"code": 400, "message": "Token limit reached"}, "choices": []}
    provider.queue(Reply(chunks=[openai_wire.chunk({"content": "Par"}), sse(limit)]))
    core = await openai_core(make_core, provider, name="openrouter")
    result = await submit(core, "hi")
    assert result.error == "openrouter: Token limit reached"
    assert [m.role for m in core.history] == ["user"]  # the error is no message of the model's
    assert core.conversation.errors[0]["error"] == "openrouter: Token limit reached"
    assert len(provider.requests) == 1  # not compacted, not retried


# -- agent-file settings ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_ollie_generation_keys_reach_the_request(make_core, provider: FakeProvider):
    provider.queue(openai_text("ok"))
    core = await openai_core(
        make_core,
        provider,
        topK=20,
        minP=0.05,
        reasoningEffort="low",
        maxCompletionTokens=900,
        tools=False,
    )
    await submit(core, "hi")
    body = provider.requests[0].body
    assert (body["top_k"], body["min_p"]) == (20, 0.05)
    assert (body["reasoning_effort"], body["max_completion_tokens"]) == ("low", 900)
    assert "tools" not in body


@pytest.mark.anyio
async def test_openrouter_cost_and_cached_tokens_add_up_over_a_session(make_core, provider):
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 900},
        "cost": 0.25,
    }
    reply = openai_text("ok")
    reply.chunks[-2] = openai_wire.chunk(None, usage=usage)
    provider.queue(reply, MODELS, reply)  # 1000 tokens in: the next turn asks the window
    core = await openai_core(make_core, provider, name="openrouter")
    await submit(core, "one")
    await submit(core, "two")
    assert (core.usage.input_tokens, core.usage.cache_read_tokens) == (2000, 1800)
    assert core.usage.cost == 0.5
    assert str(core.usage).endswith("(1,800 cached, 0 cache writes)")


@pytest.mark.anyio
async def test_the_cost_openrouter_bills_wins_over_the_price_table(make_core, provider):
    usage = {"prompt_tokens": 1000, "completion_tokens": 10, "cost": 0.5}
    reply = openai_text("ok")
    reply.chunks[-2] = openai_wire.chunk(None, usage=usage)
    provider.queue(reply)
    model = "openai/gpt-4o-mini"  # a model the price table knows on openrouter
    backend = OpenAIBackend(
        model, base_url=provider.url + "/v1", api_key=FAKE_KEY, name="openrouter", retry=FAST
    )
    core = await make_core(backend)
    await submit(core, "one")
    assert priced(Usage(1000, 10), "openrouter", model).cost not in (None, 0.5)  # it has one
    assert core.usage.cost == 0.5  # the billed figure, not the table's estimate
