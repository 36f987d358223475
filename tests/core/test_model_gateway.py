"""The model gateway: every request is checked against the caps, reserved while in flight and
counted, whatever path sends it (turns, compaction, sub-agents, parallel runs).

The offline model counts words as tokens; the gateway reserves about a quarter of a
request's characters, so a prompt of N words ("word " each) is held as about 1.25 N.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ollie_nb.core import (
    BudgetExceededError,
    Budgets,
    CapKind,
    Caps,
    UsageReported,
)
from ollie_nb.core._budget import Ledger, Scope
from ollie_nb.core._compact import COMPACT_PROMPT
from ollie_nb.llm import Message, OfflineBackend, ToolCall, Usage
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import Spend, StepState
from tests.core.test_budget_runs import THREE, store_states
from tests.support.agents import tasks_agent

CAP_LINE = "the session's token cap 1 is reached: "


def _recording(requests: list):
    """A model that answers briefly and summarises when asked; it keeps every request."""

    def reply(messages, tools):
        requests.append(messages[-1].content)
        if messages[-1].content.startswith(COMPACT_PROMPT):
            return "SUMMARY: the user said hello"
        return "fine"

    return reply


def _summaries(requests: list) -> int:
    return sum(text.startswith(COMPACT_PROMPT) for text in requests)


@pytest.mark.anyio
async def test_a_compaction_is_counted_in_the_session_spend(make_core):
    requests: list = []
    core = await make_core(OfflineBackend(_recording(requests)))
    await core.submit("hello there")
    spent, read = core.spend.session.spend.tokens, core.session.usage.input_tokens
    await core.session.compact()
    assert _summaries(requests) == 1
    # the summary request's tokens count in the ledger and in the usage totals alike
    assert core.spend.session.spend.tokens > spent
    assert core.session.usage.input_tokens > read and core.session.usage.requests == 2
    assert (
        core.spend.session.spend.tokens
        == core.session.usage.input_tokens + core.session.usage.output_tokens
    )


@pytest.mark.anyio
async def test_ollie_compact_at_a_reached_cap_is_refused_and_keeps_the_history(make_core):
    requests: list = []
    core = await make_core(OfflineBackend(_recording(requests)), start=False)
    core.user_budgets = Budgets(session=Caps(tokens=1))
    await core.start()
    await core.submit("hello there")
    kept = list(core.session.history)
    with pytest.raises(BudgetExceededError) as raised:
        await core.session.compact()
    refused = raised.value
    assert str(refused).startswith(CAP_LINE) and refused.kind is CapKind.TOKENS
    assert _summaries(requests) == 0 and core.session.usage.requests == 1  # nothing was sent
    assert core.session.history == kept and not core.session.archive_path.exists()


@pytest.mark.anyio
async def test_the_automatic_compaction_at_a_reached_cap_is_not_sent(make_core):
    requests: list = []
    core = await make_core(OfflineBackend(_recording(requests), context_length=2400), start=False)
    core.user_budgets = Budgets(session=Caps(tokens=1))
    await core.start()
    await core.submit("hello there")  # spends: the cap is reached
    long = [Message.user("detail " * 1000), Message.assistant("noted")]
    core.session.history[:0] = long  # the context is past 75% of the window
    kept = list(core.session.history)
    result = await core.submit("go on")
    assert _summaries(requests) == 0 and requests == ["hello there"]
    assert result.capped and result.error.startswith(CAP_LINE)
    assert core.session.history[: len(kept)] == kept  # nothing compacted away


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_sub_agent_cap_in_a_parallel_run_refuses_each_childs_second_request(
    make_core, tmp_path
):
    core = await make_core(agent=tasks_agent(tmp_path / "t.db", maxSubagentTokens=10))
    lines: list[str] = []
    await core.submit(THREE)
    run = await core.runs.run_plan(parallel=2, on_event=lambda e: lines.append(e.text))
    for name in set(run.workers.values()):
        child = core.subagents.children[name]
        assert child.usage.requests == child.turns  # one request per step, none after it
        assert child.error.startswith(f"sub-agent {name}'s token cap 10 is reached: ")
        assert child.capped
        said = [line for line in lines if f"by {name}; {name} stopped: sub-agent" in line]
        assert said, lines  # the run's own lines say the cap stopped it


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_plan_run_cap_binds_before_the_steps_next_request(make_core, tmp_path):
    def model(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):  # a long answer, then more
            return Message.assistant("word " * 700, [ToolCall(name="no_such_tool")])
        return demo_reply(messages, tools)

    core = await make_core(OfflineBackend(model), agent=tasks_agent(tmp_path / "t.db"), start=False)
    core.user_budgets = Budgets(plan=Caps(tokens=500))
    await core.start()
    await core.submit(THREE)
    record = core.plans[-1]
    run = await core.runs.run_plan(parallel=1)
    states = await store_states(core, record)
    (worker,) = set(run.workers.values())
    child = core.subagents.children[worker]
    assert child.usage.requests == 1  # the step's second request was refused
    assert child.error.startswith("plan 1's token cap 500 is reached: ")
    assert run.capped.startswith("plan 1's token cap 500 is reached: ")
    assert list(run.workers) == [record.ids[0]]  # no other step started
    assert states == dict.fromkeys(record.ids, StepState.OPEN)  # its step handed back


@pytest.mark.anyio
async def test_four_children_spawned_at_once_end_within_the_cap_plus_one_request(make_core):
    spawns = [
        {"name": "subagent_spawn", "arguments": {"name": f"c{i}", "prompt": "word " * 200}}
        for i in range(1, 5)
    ]
    wait = {"name": "subagent_wait", "arguments": {"names": ["c1", "c2", "c3", "c4"]}}

    def model(messages, tools):
        if "You are sub-agent" in messages[0].content:
            return "done"
        last = messages[-1]
        if last.role == "user":
            return spawns  # about 900 tokens: the cap is not reached yet
        return [wait] if last.name == "subagent_spawn" else "all waited"

    core = await make_core(OfflineBackend(model), start=False)
    core.user_budgets = Budgets(session=Caps(tokens=1000))
    core.subagents.limit = 4
    events: list = []
    await core.start()
    await core.submit("spawn four", events.append)
    await asyncio.gather(*(c.until_idle() for c in core.subagents.children.values()))
    children = list(core.subagents.children.values())
    requests = [e.input_tokens + e.output_tokens for e in events if isinstance(e, UsageReported)]
    requests += [c.usage.input_tokens + c.usage.output_tokens for c in children if c.turns]
    assert core.spend.session.spend.tokens <= 1000 + max(requests)
    refused = [c for c in children if not c.usage.requests]
    assert refused and all(c.capped and "the session's token cap 1,000" in c.error for c in refused)
    assert any("in requests under way" in c.error for c in refused)


def test_a_reservation_holds_its_estimate_on_the_chain_until_released():
    session = Ledger(Scope.SESSION, lambda: Caps(tokens=100))
    child = Ledger(Scope.SUBAGENT, parent=session, name="c1")
    held = child.reserve(Spend(100))
    assert session.in_flight == child.in_flight == Spend(100)
    with pytest.raises(BudgetExceededError) as refused:
        child.reserve(Spend(1))  # spend 0, but 100 tokens under way reach the cap
    assert "about 100 tokens in requests under way" in str(refused.value)
    assert child.exceeded() is None  # nothing spent yet: a parallel run is not stopped
    held.release()
    held.release()  # once only
    assert session.in_flight == child.in_flight == Spend()
    child.reserve(Spend(1)).release()  # free again


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_plan_run_cap_holds_off_the_workers_that_would_start_together(make_core, tmp_path):
    async def model(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            await asyncio.sleep(0.5)  # the workers' first requests overlap
        return demo_reply(messages, tools)

    core = await make_core(OfflineBackend(model), agent=tasks_agent(tmp_path / "t.db"), start=False)
    core.user_budgets = Budgets(plan=Caps(tokens=150))  # under two steps' first requests
    await core.start()
    await core.submit(THREE)
    run = await core.runs.run_plan(parallel=3)
    workers = [core.subagents.children[name] for name in run.workers.values()]
    sent = [w for w in workers if w.usage.requests]
    biggest = max(w.usage.input_tokens + w.usage.output_tokens for w in sent)
    assert sum(s.tokens for s in run.spend.values()) <= 150 + biggest
    held_off = [w for w in workers if not w.usage.requests]
    assert held_off and all("in requests under way" in w.error for w in held_off)
    assert run.capped.startswith("plan 1's token cap 150 is reached: ")


@given(
    cap=st.integers(1, 10_000),
    spent=st.integers(0, 10_000),
    held=st.lists(st.integers(0, 5_000), max_size=6),
)
def test_a_request_is_refused_exactly_when_spend_and_requests_in_flight_reach_the_cap(
    cap, spent, held
):
    session = Ledger(Scope.SESSION, lambda: Caps(tokens=cap))
    child = Ledger(Scope.SUBAGENT, parent=session, name="c1")
    child.add(Usage(input_tokens=spent))
    holds = []
    for tokens in held:
        under_way = session.in_flight.tokens
        try:
            holds.append(child.reserve(Spend(tokens)))
        except BudgetExceededError as refused:
            assert spent + under_way >= cap and refused.kind is CapKind.TOKENS
        else:
            assert spent + under_way < cap
    for hold in holds:
        hold.release()
    assert session.in_flight == child.in_flight == Spend()
    assert (session.exceeded() is None) == (spent < cap)  # what was spent, only
