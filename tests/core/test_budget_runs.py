"""Spend caps of parallel runs and sub-agents, on real `ollie-tasks` subprocesses and SQLite.

The offline model counts words as tokens; one step of the demo planner uses about 240.
"""

from __future__ import annotations

import asyncio
import time

from ollie_nb.core import AgentCore, Budgets, Caps, WatchWhat
from ollie_nb.llm import Message, OfflineBackend, ToolCall
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import StepState, read_state, read_step
from tests.support.agents import tasks_agent
from tests.support.waits import until

THREE = "Three chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 4))
WIDE = "Eight chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 9))


def wordy_step(title: str, seconds: float = 0.2):
    """The demo planner, slowed; the step `title` answers 2,000 words and a tool call first."""

    async def reply(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            step = read_step(last.content)
            if step is not None and step.title == title:
                return Message.assistant("word " * 2000, [ToolCall(name="no_such_tool")])
            await asyncio.sleep(seconds)
        return demo_reply(messages, tools)

    return reply


async def store_states(core: AgentCore, record) -> dict[str, StepState]:
    return {k: read_state(v) for k, v in (await core.plans.statuses(record)).items()}


def test_a_sub_agent_cap_stops_one_worker_while_the_others_finish(tmp_path):
    backend = OfflineBackend(wordy_step("Chore 2"))
    core = AgentCore(backend, agent=tasks_agent(tmp_path / "t.db"), workdir=tmp_path)
    core.autosave = False
    core.user_budgets = Budgets(subagent=Caps(tokens=1000))
    events: list = []

    async def scenario():
        async with core:
            await core.submit(THREE)
            record = core.plans[-1]
            run = await core.runs.run_plan(parallel=3, on_event=events.append)
            return record, run, await store_states(core, record)

    record, run, states = asyncio.run(scenario())
    first, capped, third = record.ids
    assert run.over_cap == [capped] and not run.failed and not run.capped
    assert states == {first: StepState.DONE, capped: StepState.OPEN, third: StepState.DONE}
    worker = core.subagents.children[run.workers[capped]]
    assert worker.usage.requests == 1  # its second request was never sent
    assert worker.error.startswith(f"sub-agent {worker.name}'s token cap 1,000 is reached: ")
    assert run.spend[capped].tokens >= 2000 and 0 < run.spend[first].tokens < 1000
    assert core.spend.steps(record.number) == run.spend  # kept for the graph and %ollie plans
    assert "handed back at a spend cap: " + capped in run.summary
    table = run.table(record).splitlines()
    assert table[2] == f"step 2 ({capped}) open by {worker.name}: {run.spend[capped]}"
    assert events[-1].what is WatchWhat.FINISHED


def test_a_plan_run_cap_stops_new_steps_once_reached(tmp_path):
    core = AgentCore(
        OfflineBackend(wordy_step("", 0.0)), agent=tasks_agent(tmp_path / "t.db"), workdir=tmp_path
    )
    core.autosave = False
    core.user_budgets = Budgets(plan=Caps(tokens=600))  # a few steps of one worker
    events: list = []

    async def scenario():
        async with core:
            await core.submit(WIDE)
            record = core.plans[-1]
            run = await core.runs.run_plan(parallel=1, on_event=events.append)
            return record, run, await store_states(core, record)

    record, run, states = asyncio.run(scenario())
    assert run.capped.startswith("plan 1's token cap 600 is reached: ")
    worked = [i for i in record.ids if i in run.workers]
    assert worked == list(record.ids[: len(worked)]) and all(
        states[i] is StepState.DONE for i in worked
    )
    # one worker, one step at a time: the steps started until their spend reached the cap
    spent = [run.spend[i].tokens for i in worked]
    assert sum(spent) >= 600 > sum(spent[:-1])
    assert all(states[i] is StepState.OPEN for i in record.ids if i not in worked)
    stopped = [e for e in events if e.what is WatchWhat.STOPPED]
    assert len(stopped) == 1 and stopped[0].text == f"plan 1: {run.capped}"


def test_a_plan_run_cap_hands_back_the_steps_at_work_as_on_stop(tmp_path):
    backend = OfflineBackend(wordy_step("Chore 1", seconds=5.0))  # the others take 5 s
    core = AgentCore(backend, agent=tasks_agent(tmp_path / "t.db"), workdir=tmp_path)
    core.autosave = False
    core.user_budgets = Budgets(plan=Caps(tokens=1000))  # reached by Chore 1's first reply

    async def scenario():
        async with core:
            await core.submit(THREE)
            record = core.plans[-1]
            started = time.monotonic()
            run = await core.runs.run_plan(parallel=2)
            took = time.monotonic() - started
            busy = [child.name for child in core.subagents.running]
            return record, run, await store_states(core, record), busy, took

    record, run, states, busy, took = asyncio.run(scenario())
    first, second, _third = record.ids
    assert busy == [] and took < 5.0  # the worker at work on Chore 2 was stopped, not waited for
    assert core.subagents.children[run.workers[second]].interrupted
    assert set(run.workers) == {first, second}  # Chore 3 never started
    assert states == dict.fromkeys(record.ids, StepState.OPEN)  # both handed back
    assert run.capped.startswith("plan 1's token cap 1,000 is reached: ")


def test_a_session_cap_ends_the_queue_drain_with_the_queue_kept(tmp_path):
    core = AgentCore(OfflineBackend(), workdir=tmp_path, autosave=False)
    core.user_budgets = Budgets(session=Caps(tokens=1))

    async def scenario():
        async with core:
            core.prompts.put("second")
            core.prompts.put("third")
            return await core.submit("first")

    result = asyncio.run(scenario())
    assert result.capped and core.session.usage.requests == 1  # "first" was answered, no more
    assert core.prompts.texts == ["third"]  # "second" ended at the cap; the drain stopped there


def test_the_watch_stops_at_a_plan_cap_and_hands_its_step_back(tmp_path):
    backend = OfflineBackend(wordy_step("Collect data", 0.0))  # 2,000 words, then a tool call
    core = AgentCore(backend, agent=tasks_agent(tmp_path / "t.db"), workdir=tmp_path)
    core.autosave = False
    core.user_budgets = Budgets(plan=Caps(tokens=50))  # reached by the first step's first reply
    events: list = []

    async def scenario():
        async with core:
            await core.submit("Ship the report\n- Collect data\n- Clean data\n- Publish")
            record = core.plans[-1]
            before = core.session.usage.requests
            await core.watch.start(on_event=events.append)
            await until(lambda: core.watch.waker is None and not core.is_running)
            return record, core.session.usage.requests - before, await store_states(core, record)

    record, requests, states = asyncio.run(scenario())
    assert requests == 1  # the step's first request; its second was refused
    assert states == dict.fromkeys(record.ids, StepState.OPEN)  # step 1 handed back
    (stopped,) = [e for e in events if getattr(e, "what", None) is WatchWhat.STOPPED]
    assert "a turn the agent started itself failed: plan 1's token cap 50 is reached" in (
        stopped.text
    )
    assert stopped.text.endswith("; the watch is off (turn it on again to go on)")
    assert core.spend.steps(record.number)[record.ids[0]].tokens >= 50


def test_a_spawned_sub_agent_stops_at_its_cap_and_the_parent_reads_why(tmp_path):
    def model(messages, tools):
        system, last = messages[0].content, messages[-1]
        if "You are sub-agent" in system:  # the child: a long answer and a call, then more
            return Message.assistant("word " * 2000, [ToolCall(name="no_such_tool")])
        if last.role == "user":
            return [{"name": "subagent_spawn", "arguments": {"name": "c1", "prompt": "go"}}]
        if last.name == "subagent_spawn":
            return [{"name": "subagent_wait", "arguments": {"names": ["c1"], "timeout": 30}}]
        return "done waiting"

    core = AgentCore(OfflineBackend(model), workdir=tmp_path, autosave=False)
    core.user_budgets = Budgets(subagent=Caps(tokens=1000))

    async def scenario():
        async with core:
            return await core.submit("spawn one")

    result = asyncio.run(scenario())
    child = core.subagents.children["c1"]
    assert child.usage.requests == 1 and child.capped
    waited = next(
        m.content for m in core.session.history if m.role == "tool" and "c1: failed" in m.content
    )
    assert "c1: failed: sub-agent c1's token cap 1,000 is reached: " in waited
    assert result.reply == "done waiting" and not result.capped  # the parent has no cap
