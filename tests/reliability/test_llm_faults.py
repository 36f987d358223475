"""Provider HTTP faults through AgentCore with the real OpenAI and Anthropic backends.

Each fault ends the turn with one clear error event (or a retry and the reply), leaves
the history consistent, and the next turn works against the same backend.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from ollie_nb.core import AgentCore, Notice, Retrying, TextDelta, ToolFinished, TurnEnded
from ollie_nb.llm import AnthropicBackend, OpenAIBackend, RetryPolicy
from tests.llm import test_anthropic as anthropic_wire
from tests.llm import test_openai as openai_wire
from tests.support.agents import assert_consistent
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply, json_reply

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05, statuses=(429, 529))


@dataclass(frozen=True)
class Wire:
    """One provider's wire format: how to build its backend and its streamed replies."""

    name: str
    make: Callable[[FakeProvider], Any]
    text: Callable[..., list[bytes]]
    think: Callable[[str], list[bytes]]  # a reasoning_think tool call with this id


def _openai_text(*pieces: str) -> list[bytes]:
    chunk = openai_wire.chunk
    return [
        chunk({"role": "assistant", "content": ""}),
        *[chunk({"content": p}) for p in pieces],
        chunk({}, "stop"),
        openai_wire.USAGE_CHUNK,
        openai_wire.DONE,
    ]


def _openai_think(call_id: str) -> list[bytes]:
    args = json.dumps({"thought": "check first"})
    return [
        openai_wire.call_delta(0, "", call_id, "reasoning_think"),
        openai_wire.call_delta(0, args),
        openai_wire.chunk({}, "tool_calls"),
        openai_wire.DONE,
    ]


def _anthropic_text(*pieces: str) -> list[bytes]:
    return [
        anthropic_wire.MESSAGE_START,
        *anthropic_wire.text_block(0, *pieces),
        *anthropic_wire.finish("end_turn", 5),
    ]


def _anthropic_think(call_id: str) -> list[bytes]:
    args = json.dumps({"thought": "check first"})
    return [
        anthropic_wire.MESSAGE_START,
        *anthropic_wire.tool_block(0, call_id, "reasoning_think", args),
        *anthropic_wire.finish("tool_use", 5),
    ]


WIRES = [
    Wire(
        "openai",
        lambda p: OpenAIBackend(
            "gpt-4o-mini", base_url=p.url + "/v1", api_key=FAKE_KEY, retry=FAST
        ),
        _openai_text,
        _openai_think,
    ),
    Wire(
        "anthropic",
        lambda p: AnthropicBackend(
            "claude-sonnet-4-6", api_key=FAKE_KEY, base_url=p.url, retry=FAST
        ),
        _anthropic_text,
        _anthropic_think,
    ),
]


@pytest.fixture(params=WIRES, ids=lambda w: w.name)
def wire(request) -> Wire:
    return request.param


def run_turns(core: AgentCore, *prompts: str) -> list[tuple[Any, list]]:
    """Submit prompts one after another on one loop; each with its own event list."""

    async def scenario():
        out = []
        async with core:
            for prompt in prompts:
                events: list = []
                out.append((await core.submit(prompt, events.append), events))
        return out

    return asyncio.run(scenario())


def errors(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.level == "error"]


def assert_next_turn_works(turn, provider: FakeProvider, before: int) -> None:
    result, events = turn
    assert result.reply == "fine again" and not result.error and not errors(events)
    assert len(provider.requests) == before + 1


def test_429_then_success_emits_retries_and_the_reply(provider, wire, tmp_path):
    limited = json_reply(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "0"})
    provider.queue(limited, limited, Reply(chunks=wire.text("Hello", " there")))
    core = AgentCore(wire.make(provider), workdir=tmp_path)
    ((result, events),) = run_turns(core, "hi")
    retries = [e for e in events if isinstance(e, Retrying)]
    assert [e.attempt for e in retries] == [1, 2]
    assert all("Rate limit reached" in e.reason for e in retries)
    assert result.reply == "Hello there" and not errors(events)
    assert [(m.role, m.content) for m in core.session.history] == [
        ("user", "hi"),
        ("assistant", "Hello there"),
    ]
    assert len(provider.requests) == 3


def test_429_forever_is_one_clear_error_and_the_next_turn_works(provider, wire, tmp_path):
    limited = json_reply(429, {"error": {"message": "Rate limit reached"}})
    provider.queue(*[limited] * 4, Reply(chunks=wire.text("fine again")))
    core = AgentCore(wire.make(provider), workdir=tmp_path)
    (failed, failed_events), nxt = run_turns(core, "hi", "and now?")
    assert errors(failed_events) == [
        f"{wire.name}: HTTP 429: Rate limit reached (gave up after 3 retries)"
    ]
    assert failed.error == errors(failed_events)[0] and not failed.interrupted
    assert [type(e) for e in failed_events].count(Retrying) == 3
    assert failed_events[-1] == TurnEnded(failed) and failed.steps == 1
    assert_next_turn_works(nxt, provider, 4)
    assert_consistent(core.session.history)
    assert_error_kept_out_of_the_context(core, provider, failed.error)


def assert_error_kept_out_of_the_context(core: AgentCore, provider, error: str) -> None:
    """The failed call is no message: the model never reads it; the session keeps it apart."""
    assert [(m.role, m.content) for m in core.session.history] == [
        ("user", "hi"),
        ("user", "and now?"),
        ("assistant", "fine again"),
    ]
    sent = json.dumps(provider.requests[-1].body)
    assert "Rate limit" not in sent and "no reply" not in sent and '"and now?"' in sent
    saved = core.session.data()
    assert [e["error"] for e in saved.errors] == [error] and saved.errors[0]["at"] == 1


def test_500_is_not_retried_and_the_next_turn_works(provider, wire, tmp_path):
    provider.queue(
        json_reply(500, {"error": {"message": "The server had an error"}}),
        Reply(chunks=wire.text("fine again")),
    )
    core = AgentCore(wire.make(provider), workdir=tmp_path)
    (_, events), nxt = run_turns(core, "hi", "again")
    assert errors(events) == [f"{wire.name}: HTTP 500: The server had an error"]
    assert not [e for e in events if isinstance(e, Retrying)]
    assert_next_turn_works(nxt, provider, 1)
    assert_consistent(core.session.history)


def test_connection_reset_mid_stream_keeps_history_consistent(provider, wire, tmp_path):
    broken = wire.text("Hello", " half", " a reply")
    provider.queue(Reply(chunks=broken, reset_after=3), Reply(chunks=wire.text("fine again")))
    core = AgentCore(wire.make(provider), workdir=tmp_path)
    (_, events), nxt = run_turns(core, "hi", "again")
    (error,) = errors(events)
    assert error.startswith(f"{wire.name}: connection lost while streaming from")
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed.startswith("Hello")  # what the user saw before the reset
    assert [m.role for m in core.session.history] == ["user", "user", "assistant"]
    assert [e["error"] for e in core.session.data().errors] == [error]
    assert_next_turn_works(nxt, provider, 1)
    assert_consistent(core.session.history)


def test_error_after_a_tool_call_leaves_the_call_answered(provider, wire, tmp_path):
    provider.queue(
        Reply(chunks=wire.think("call_1")),
        json_reply(500, {"error": {"message": "upstream failed"}}),
        Reply(chunks=wire.text("fine again")),
    )
    core = AgentCore(wire.make(provider), workdir=tmp_path)
    (_, events), nxt = run_turns(core, "think first", "again")
    assert [e.result for e in events if isinstance(e, ToolFinished)] == ["ok"]
    assert errors(events) == [f"{wire.name}: HTTP 500: upstream failed"]
    assert [m.role for m in core.session.history[:4]] == ["user", "assistant", "tool", "user"]
    assert_next_turn_works(nxt, provider, 2)
    assert_consistent(core.session.history)
    # the next request carried the call and its answer, paired as the provider demands
    sent = json.dumps(provider.requests[-1].body)
    assert sent.count("call_1") == 2


@pytest.mark.anyio
async def test_stalled_stream_is_interrupted_and_the_connection_closed(provider, wire, tmp_path):
    provider.queue(
        Reply(chunks=wire.text("Hello", " and then")[:3], hold_open=True),
        Reply(chunks=wire.text("fine again")),
    )
    core = AgentCore(wire.make(provider), workdir=tmp_path)

    async def scenario():
        async with core:
            loop = asyncio.get_running_loop()

            def sink(event):
                if isinstance(event, TextDelta):
                    loop.call_soon(core.interrupt)

            stalled = await core.submit("hi", sink)
            events: list = []
            return stalled, (await core.submit("again", events.append), events)

    stalled, nxt = await asyncio.wait_for(scenario(), 20)
    assert stalled.interrupted
    assert core.session.history[1].content.endswith("[interrupted by the user]")
    assert_next_turn_works(nxt, provider, 1)
    assert_consistent(core.session.history)
    for _ in range(200):
        if provider.hangups:
            break
        await asyncio.sleep(0.01)
    assert provider.hangups == 1
