"""The loop's guardrails, as ollie has them, on the OpenAI and Anthropic wire formats.

Failing rounds nudge the model, then stop the turn; the context is warned about once at
60% of the window, again after a compaction; identical calls of one batch to a read-only
tool run once. The fake provider records what the model received.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.core import AgentConfig, AgentCore, Notice, ToolFinished
from ollie_nb.core._guardrails import ContextWarning, FailedRounds, RoundVerdict
from ollie_nb.llm import OfflineBackend, ToolCall
from ollie_nb.tools import PythonServer
from tests.core.test_provider_requests import WIRES, Wire, allow, tool_text
from tests.llm import test_anthropic as anthropic_wire
from tests.llm import test_openai as openai_wire
from tests.support.llm_fake_provider import FakeProvider, Reply, json_reply

FIXTURES = Path(__file__).resolve().parents[1] / "support" / "fixtures"
NUDGED = "your last several tool calls all failed"
WINDOW = 100_000


@pytest.fixture(params=WIRES, ids=lambda w: w.name)
def wire(request) -> Wire:
    return request.param


def calls_reply(wire: Wire, *calls: tuple[str, str, dict]) -> Reply:
    """One response making `calls` (call id, tool, arguments), in either wire format."""
    if wire.name == "openai":
        chunks = []
        for n, (call_id, name, args) in enumerate(calls):
            chunks += [
                openai_wire.call_delta(n, "", call_id, name),
                openai_wire.call_delta(n, json.dumps(args)),
            ]
        return Reply(chunks=[*chunks, openai_wire.chunk({}, "tool_calls"), openai_wire.DONE])
    blocks = [
        piece
        for n, (call_id, name, args) in enumerate(calls)
        for piece in anthropic_wire.tool_block(n, call_id, name, json.dumps(args))
    ]
    finish = anthropic_wire.finish("tool_use", 5)
    return Reply(chunks=[anthropic_wire.MESSAGE_START, *blocks, *finish])


def text_reply(wire: Wire, text: str, input_tokens: int) -> Reply:
    """A text response whose usage says the request held `input_tokens`."""
    if wire.name == "openai":
        chunk = openai_wire.chunk
        usage = {"prompt_tokens": input_tokens, "completion_tokens": 5, "total_tokens": 0}
        return Reply(
            chunks=[
                chunk({"role": "assistant", "content": text}),
                chunk({}, "stop"),
                chunk(None, usage=usage),
                openai_wire.DONE,
            ]
        )
    start = json.loads(anthropic_wire.MESSAGE_START.split(b"data: ", 1)[1])
    start["message"]["usage"] = {"input_tokens": input_tokens, "output_tokens": 1}
    begin = anthropic_wire.event("message_start", message=start["message"])
    return Reply(
        chunks=[begin, *anthropic_wire.text_block(0, text), *anthropic_wire.finish("end_turn", 5)]
    )


def window_reply(wire: Wire) -> Reply:
    """The provider's models API saying the model's window is WINDOW tokens."""
    if wire.name == "openai":
        entry = {"id": "gpt-4o-mini", "object": "model", "created": 0, "context_length": WINDOW}
        return json_reply(200, {"object": "list", "data": [entry]})
    info = {
        "type": "model",
        "id": "claude-sonnet-4-6",
        "display_name": "Claude Sonnet 4.6",
        "created_at": "2025-09-29T00:00:00Z",
        "max_input_tokens": WINDOW,
    }
    return json_reply(200, info)


def last_message(provider: FakeProvider, n: int) -> str:
    """The last message of the n-th chat request, as JSON text."""
    chats = [r for r in provider.requests if r.method == "POST"]
    return json.dumps(chats[n].body["messages"][-1])


def failing(wire: Wire, call_id: str) -> Reply:
    return calls_reply(wire, (call_id, "no_such_tool", {}))


async def turns(core: AgentCore, *prompts: str) -> list[tuple[Any, list]]:
    """Each prompt's result and events, one turn after another."""
    done = []
    for prompt in prompts:
        events: list = []
        done.append((await core.submit(prompt, events.append), events))
    return done


# -- failing rounds --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_five_failed_rounds_nudge_once_and_ten_stop_the_turn(make_core, provider, wire):
    provider.queue(
        *[failing(wire, f"c{n}") for n in range(1, 11)], Reply(chunks=wire.text("never asked"))
    )
    core = await make_core(wire.make(provider))
    ((result, events),) = await turns(core, "Do it")

    chats = [r for r in provider.requests if r.method == "POST"]
    assert len(chats) == 10  # the 10th failed round stops the turn: no 11th request
    nudged = [n for n in range(10) if NUDGED in last_message(provider, n)]
    assert nudged == [5]  # on the 5th round's result, which the 6th request carries
    assert "Read their errors" in tool_text(core, "c5")
    assert "failedRoundsLimit 10" in result.error
    lines = [e.text for e in events if isinstance(e, Notice) and e.level == "error"]
    assert lines == [result.error]
    assert (
        core.session.history[-1].role == "assistant"
    )  # the next prompt follows a reply, as it must


@pytest.mark.anyio
async def test_the_keys_set_the_counts_and_a_successful_call_starts_again(
    make_core, provider, wire
):
    think = ("ok", "reasoning_think", {"thought": "look elsewhere"})
    provider.queue(
        failing(wire, "c1"),
        calls_reply(wire, ("c2", "no_such_tool", {}), think),  # one call works: counts restart
        failing(wire, "c3"),
        failing(wire, "c4"),  # the second failed round in a row: nudged
        failing(wire, "c5"),  # the third: stopped
        Reply(chunks=wire.text("never asked")),
    )
    agent = AgentConfig.from_dict({"failedRoundsNudge": 2, "failedRoundsLimit": 3})
    core = await make_core(wire.make(provider), agent=agent)
    ((result, _),) = await turns(core, "Do it")

    assert len([r for r in provider.requests if r.method == "POST"]) == 5
    assert [n for n in range(5) if NUDGED in last_message(provider, n)] == [4]
    assert "failedRoundsLimit 3" in result.error


def test_failed_rounds_counter_at_its_edges():
    rounds = FailedRounds(nudge_at=2, stop_at=3)
    verdicts = [rounds.record(f) for f in ([True], [True, False], [True], [True, True], [True])]
    go, nudge, stop = RoundVerdict.GO_ON, RoundVerdict.NUDGE, RoundVerdict.STOP
    assert verdicts == [go, go, go, nudge, stop]
    off = FailedRounds(nudge_at=0, stop_at=0)
    assert {off.record([True]) for _ in range(20)} == {go}


# -- the context warning ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_context_is_warned_about_once_at_60_percent_and_again_after_compaction(
    make_core, provider, wire
):
    provider.queue(
        text_reply(wire, "One.", 61_000),
        window_reply(wire),  # asked at the second turn, when the context is over 1000 tokens
        text_reply(wire, "Two.", 62_000),  # the second turn starts at 61%: warned
        text_reply(wire, "Three.", 76_000),  # at 62%: not again
        Reply(
            chunks=wire.text("A summary.")
        ),  # the fourth turn starts at 76%: compacted, not warned
        text_reply(wire, "Four.", 63_000),
        text_reply(wire, "Five.", 1_000),  # the fifth starts at 63% after a compaction: warned
    )
    core = await make_core(wire.make(provider))
    done = await turns(core, "one", "two", "three", "four", "five")

    assert [result.reply for result, _ in done] == ["One.", "Two.", "Three.", "Four.", "Five."]
    warned = [
        [e.text for e in ev if isinstance(e, Notice) and e.level == "warning"] for _, ev in done
    ]
    assert warned == [
        [],
        ["context at 61% of the model's window (61000 of 100000 tokens); it is compacted at 75%"],
        [],
        [],
        ["context at 63% of the model's window (63000 of 100000 tokens); it is compacted at 75%"],
    ]
    fourth = [e.text for e in done[3][1] if isinstance(e, Notice)]
    assert any("compacting first" in text for text in fourth)


def test_context_warning_latch():
    latch = ContextWarning()
    assert latch.check(599, 1000) == ""
    assert latch.check(600, 1000).startswith("context at 60%")
    assert latch.check(700, 1000) == ""
    latch.rearm()
    assert latch.check(650, 1000).startswith("context at 65%")
    assert latch.check(100, 1000) == ""  # below the mark again (a manual compaction)
    assert latch.check(610, 1000).startswith("context at 61%")


# -- identical read-only calls ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_identical_calls_to_a_read_only_tool_run_once_and_others_run_each_time(
    make_core, provider, wire, tmp_path
):
    log = tmp_path / "calls.log"
    look = {"log": str(log), "what": "a"}
    provider.queue(
        calls_reply(
            wire,
            ("c1", "look", look),
            ("c2", "look", dict(reversed(look.items()))),  # the same arguments in another order
            ("c3", "look", {**look, "what": "b"}),
            ("c4", "note", look),
            ("c5", "note", look),
        ),
        Reply(chunks=wire.text("Done.")),
    )
    server = {"command": sys.executable, "args": [str(FIXTURES / "counting_server.py")]}
    agent = AgentConfig.from_dict({"mcpServers": {"counting": server}})
    core = await make_core(wire.make(provider), agent=agent, approve=allow)
    ((result, events),) = await turns(core, "Look twice")

    assert result.reply == "Done."
    assert sorted(log.read_text().splitlines()) == ["look a", "look b", "note a", "note a"]
    assert tool_text(core, "c2") == tool_text(core, "c1")
    assert tool_text(core, "c5") != tool_text(core, "c4")  # each note ran: its own count
    answered = [e.id for e in events if isinstance(e, ToolFinished)]
    assert sorted(answered) == ["c1", "c2", "c3", "c4", "c5"]


@pytest.mark.anyio
async def test_the_built_ins_that_only_read_are_named_read_only():
    python = PythonServer(bench=None)  # type: ignore[arg-type]  # listing reads no kernel
    python.agent_enables = True
    listed = {info.name: info.read_only for info in await python.list_tools()}
    assert listed == {
        "python_vars": True,
        "python_exec": False,
        "python_propose": False,
        "python_last_error": True,
    }
    from ollie_nb.tools._reasoning import TOOLS as REASONING
    from ollie_nb.tools._subagent import TOOLS as SUBAGENT

    read_only = {t.name for t in (*REASONING, *SUBAGENT) if t.read_only}
    assert read_only == {"reasoning_think", "subagent_list"}


@pytest.mark.anyio
async def test_a_sub_agent_has_the_same_failing_rounds_guard(make_core):
    """Issue 35: sub-agents have the guard too: a child whose every call fails stops after
    failedRoundsLimit rounds with the guard's line, and its parent is not stopped."""

    def model(messages, tools):
        if "You are sub-agent" in messages[0].content:
            return [ToolCall(name="no_such_tool")]  # every round fails
        if messages[-1].role == "user":
            return [ToolCall(name="subagent_spawn", arguments={"name": "c1", "prompt": "go"})]
        return "spawned"

    agent = AgentConfig.from_dict({"failedRoundsNudge": 2, "failedRoundsLimit": 3})
    core = await make_core(OfflineBackend(model), agent=agent)
    result = await core.submit("spawn one")
    await core.subagents.get("c1").until_idle()
    child = core.subagents.get("c1")
    assert not result.error  # the parent's own turn went on
    assert child.usage.requests == 3  # the third failed round stopped it: no fourth request
    assert "failedRoundsLimit 3" in child.error
