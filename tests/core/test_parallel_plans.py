"""Parallel plan runs: ready steps claimed and worked by sub-agents, checked from the event log.

Real `ollie-tasks` subprocesses on real SQLite files; the second kernel is another
process (tests/support/fixtures/parallel_agent.py) with its own server on the same database.
The model is the offline demo planner; step turns are slowed by a function around it
so that children really overlap.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys

from ollie_nb.core import AgentConfig, AgentCore, WatchWhat
from ollie_nb.core._sessions import plan_to_dict
from ollie_nb.llm import LLMError, OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt, parse_plan_prompt
from ollie_nb.planning import StepState, read_step
from tests.support.agents import FIXTURES, tasks_agent
from tests.support.waits import until

DIAMOND = "Ship it\n- Prepare\n- Left (after 1)\n- Middle (after 1)\n- Right (after 1)\n- Join (after 2, 3, 4)"
WIDE = "Eight chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 9))
PARALLEL_AGENT = FIXTURES / "parallel_agent.py"
DONE, FAILED, CANCELLED = StepState.DONE, StepState.FAILED, StepState.CANCELLED


def slow_steps(seconds: float, fail: str = ""):
    """The demo planner, taking `seconds` over each step; a step titled `fail` errors."""

    async def reply(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            step = read_step(last.content)
            if step is not None and step.title == fail:
                raise LLMError("the model broke down on this step")
            await asyncio.sleep(seconds)
        return demo_reply(messages, tools)

    return reply


def event_log(db) -> list[tuple[int, str, str, dict]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT seq, type, task, payload FROM events ORDER BY seq")
        return [(seq, kind, task, json.loads(payload)) for seq, kind, task, payload in rows]


def closed_goal(payload: dict) -> bool:
    return payload.get("reason") == "children_done"


def claims_and_dones(db) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Per task: the seqs of its claims and of its changes to done (goals closed by ollie-tasks left out)."""
    claims: dict[str, list[int]] = {}
    dones: dict[str, list[int]] = {}
    for seq, kind, task, payload in event_log(db):
        if kind == "claimed":
            claims.setdefault(task, []).append(seq)
        elif kind == "status_changed" and payload.get("to") == "done" and not closed_goal(payload):
            dones.setdefault(task, []).append(seq)
    return claims, dones


def assert_each_once_after_blockers(db, record) -> None:
    claims, dones = claims_and_dones(db)
    for index, step_id in enumerate(record.ids):
        assert len(claims.get(step_id, [])) == 1, (step_id, claims)
        assert len(dones.get(step_id, [])) == 1, (step_id, dones)
        for j in record.steps[index].after:
            assert dones[record.ids[j]][0] < claims[step_id][0], (index, j)


def test_a_diamond_runs_in_parallel_each_step_once_and_after_its_blockers(tmp_path):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(0.3))
    core = AgentCore(backend, agent=tasks_agent(db), workdir=tmp_path, autosave=False)
    events: list = []

    async def scenario():
        async with core:
            await core.submit(DIAMOND)
            record = core.plans[-1]
            run = await core.runs.run_plan(parallel=3, on_event=events.append)
            return record, run

    record, run = asyncio.run(scenario())
    assert run.outcome == dict.fromkeys(record.ids, "done") and not run.failed
    assert_each_once_after_blockers(db, record)
    # the middle layer was worked side by side: all three claimed before any was done
    claims, dones = claims_and_dones(db)
    middle = record.ids[1:4]
    assert max(claims[i][0] for i in middle) < min(dones[i][0] for i in middle)
    # three workers at most, each free one taking the next step, named as workers
    assert set(run.workers.values()) == {"worker1", "worker2", "worker3"}
    assert sorted(core.subagents.children) == ["worker1", "worker2", "worker3"]
    assert events[-1].what is WatchWhat.FINISHED and events[-1].record is record
    assert events[-1].statuses == dict.fromkeys(record.ids, "done")
    assert events[-1].text == "plan 1: 5 steps done by sub-agents"


def test_two_processes_claiming_from_one_database_work_each_step_once(tmp_path):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(0.8))
    core = AgentCore(backend, agent=tasks_agent(db), workdir=tmp_path, name="alice", autosave=False)

    async def other_kernel(record, ready: asyncio.Event) -> list[str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(PARALLEL_AGENT),
            str(db),
            json.dumps(plan_to_dict(record)),
            "bob",
            "2",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        first = await asyncio.wait_for(proc.stdout.readline(), 60)
        ready.set()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert first == b"ready\n" and proc.returncode == 0, err.decode()[-2000:]
        return out.decode().split()

    async def scenario():
        async with core:
            await core.submit(WIDE)
            record = core.plans[-1]
            ready = asyncio.Event()
            other = asyncio.ensure_future(other_kernel(record, ready))
            await ready.wait()  # both kernels claim from the same moment on
            mine = await core.runs.run_plan(parallel=2)
            theirs = await other
            return record, mine, theirs

    record, mine, theirs = asyncio.run(scenario())
    assert sorted([*mine.workers, *theirs]) == sorted(record.ids)  # every step, by one kernel
    assert theirs, "the other kernel claimed nothing: the claims never raced"
    assert_each_once_after_blockers(db, record)
    holders = {p["assignee"].split("@")[0] for _, kind, _, p in event_log(db) if kind == "claimed"}
    assert holders == {"alice", "bob"}


def test_a_failing_child_marks_its_step_failed_the_others_finish_and_nothing_is_orphaned(tmp_path):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(0.2, fail="Middle"))
    core = AgentCore(backend, agent=tasks_agent(db), workdir=tmp_path, autosave=False)
    events: list = []

    async def scenario():
        async with core:
            await core.submit(DIAMOND)
            run = await core.runs.run_plan(parallel=3, on_event=events.append)
            statuses = await core.plans.statuses(core.plans[-1])
            return core.plans[-1], run, statuses

    record, run, statuses = asyncio.run(scenario())
    prepare, left, middle, right, join = record.ids
    assert run.failed == [middle]
    assert statuses == {
        prepare: "done",
        left: "done",
        middle: "failed",
        right: "done",
        join: "open",
    }
    assert join not in run.workers  # never started: it waits for the failed step
    assert not any(c.busy for c in core.subagents.children.values())
    assert "failed: " + middle in events[-1].text  # the parent is told
    with sqlite3.connect(db) as conn:
        (note,) = conn.execute("SELECT text FROM notes WHERE task = ?", (middle,)).fetchone()
    assert "the model broke down on this step" in note


def test_stop_during_a_parallel_run_ends_every_child_and_hands_their_steps_back(tmp_path):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(60))
    core = AgentCore(backend, agent=tasks_agent(db), workdir=tmp_path, autosave=False)

    async def scenario():
        async with core:
            await core.submit(WIDE)
            run = asyncio.ensure_future(core.runs.run_plan(parallel=4))
            await until(lambda: len(core.subagents.running) == 4, what="four children at work")
            assert core.interrupt()
            result = await asyncio.wait_for(run, 10)  # a bound, not a measurement
            statuses = await core.plans.statuses(core.plans[-1])
            for name in result.workers.values():
                child = core.subagents.children[name]
                assert not child.busy and child.status == "interrupted"
                assert child.history[-1].role == "assistant"
            core.set_backend(OfflineBackend(slow_steps(0.01)))
            again = await core.runs.run_plan(parallel=4)  # the handed-back steps are claimed again
            return result, statuses, again

    result, statuses, again = asyncio.run(scenario())
    assert set(again.outcome.values()) == {"done"} and len(again.outcome) == 8
    assert result.interrupted
    assert sorted(set(statuses.values())) == ["open"]  # the four claimed steps went back to open
    assert set(result.outcome.values()) == {"open"} and len(result.outcome) == 4
    assert sorted(core.subagents.children) == [f"worker{n}" for n in range(1, 5)]  # reused


def test_queue_fallback_runs_each_dependency_layer_in_parallel_children(tmp_path):
    core = AgentCore(
        OfflineBackend(slow_steps(0.2)), queue_fallback=True, workdir=tmp_path, autosave=False
    )
    events: list = []

    async def scenario():
        async with core:
            # the plan is made (its steps queued) without a turn working the queue
            goal, steps = parse_plan_prompt(DIAMOND)
            args = {"goal": goal, "steps": steps}
            await core.servers.dispatcher.dispatch("reasoning", "reasoning_plan", args)
            record = core.plans[-1]
            assert len(core.prompts.texts) == 5
            run = await core.runs.run_plan(parallel=3, on_event=events.append)
            return record, run, core.prompts.texts, await core.plans.statuses(record)

    record, run, queued, statuses = asyncio.run(scenario())
    assert record.kind == "queue"
    assert statuses == dict.fromkeys(record.ids, "done")
    assert set(run.workers.values()) == {"worker1", "worker2", "worker3"}
    assert queued == []  # the queue's copies of the steps went to the children instead
    order = [(e.what.value, e.step_id) for e in events if e.step_id]
    position = {item: n for n, item in enumerate(order)}
    for index, step_id in enumerate(record.ids):
        for j in record.steps[index].after:
            assert position[("done", record.ids[j])] < position[("claimed", step_id)]
    middle = record.ids[1:4]
    assert max(position[("claimed", i)] for i in middle) < min(
        position[("done", i)] for i in middle
    )


def test_without_task_claim_steps_are_taken_with_task_update_and_the_run_says_so(
    tmp_path, fake_task_server
):
    config = AgentConfig.from_dict({"mcpServers": fake_task_server()})
    core = AgentCore(
        OfflineBackend(slow_steps(0.05)), agent=config, workdir=tmp_path, autosave=False
    )
    events: list = []

    async def scenario():
        async with core:
            await core.submit(DIAMOND)
            run = await core.runs.run_plan(parallel=2, on_event=events.append)
            return run, await core.plans.statuses(core.plans[-1])

    run, statuses = asyncio.run(scenario())
    assert "claims are not atomic" in run.note
    assert events[0].what is WatchWhat.NOTE and "claims are not atomic" in events[0].text
    assert set(statuses.values()) == {"done"} and not run.failed


def test_with_the_watch_on_a_parallel_run_and_the_agent_never_work_the_same_step(tmp_path):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(0.2))
    core = AgentCore(backend, agent=tasks_agent(db), workdir=tmp_path, autosave=False)

    async def scenario():
        async with core:
            await core.submit(DIAMOND)
            await core.watch.start()  # step 1 is queued and the agent starts it itself
            run = await core.runs.run_plan(parallel=3)
            await core.watch.until_idle(60)
            await core.watch.stop()
            return core.plans[-1], run

    record, run = asyncio.run(scenario())
    by_agent = [
        s.step_id for m in core.session.history if m.role == "user" if (s := read_step(m.content))
    ]
    by_children = list(run.workers)
    assert sorted(by_agent + by_children) == sorted(record.ids), (by_agent, by_children)
    assert set(run.outcome.values()) <= {"done"}
    assert core.prompts.texts == []


def test_a_step_the_run_is_claiming_is_not_queued_by_a_watch_read_in_between(tmp_path):
    """The watch reads the events while the run's claim of a ready step is on its way."""
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(0.1))
    core = AgentCore(backend, agent=tasks_agent(db), workdir=tmp_path, autosave=False)

    async def scenario():
        async with core:
            await core.submit(DIAMOND)
            dispatch = core.servers.dispatcher.dispatch  # the watcher keeps its own reference

            async def claim_after_a_read(server, tool, args):
                if tool == "task_claim" and core.watch.watcher is not None:
                    await core.watch.watcher.poll()  # the step is still open on the server here
                return await dispatch(server, tool, args)

            core.servers.dispatcher.dispatch = claim_after_a_read
            await core.watch.start()
            run = await core.runs.run_plan(parallel=3)
            await core.watch.until_idle(60)
            await core.watch.stop()
            return core.plans[-1], run

    record, run = asyncio.run(scenario())
    by_agent = [
        s.step_id for m in core.session.history if m.role == "user" if (s := read_step(m.content))
    ]
    assert sorted(by_agent + list(run.workers)) == sorted(record.ids), (by_agent, run.workers)


def test_a_queue_plan_never_starts_a_step_whose_blocker_failed_or_was_skipped(tmp_path):
    core = AgentCore(
        OfflineBackend(slow_steps(0.01)), queue_fallback=True, workdir=tmp_path, autosave=False
    )
    plan = "Ship it\n- Prepare\n- Left (after 1)\n- Right (after 1)\n- Then (after 2)\n- Also (after 3)"

    async def scenario():
        async with core:
            goal, steps = parse_plan_prompt(plan)
            args = {"goal": goal, "steps": steps}
            await core.servers.dispatcher.dispatch("reasoning", "reasoning_plan", args)
            record = core.plans[-1]
            prepare, left, right, _, _ = record.ids
            for step_id, state in ((prepare, DONE), (left, FAILED), (right, CANCELLED)):
                core.plans.book.mark_queue_step(record.number, step_id, state)
            run = await core.runs.run_plan(parallel=2)
            return record, run, await core.plans.statuses(record)

    record, run, statuses = asyncio.run(scenario())
    assert record.kind == "queue"
    assert run.workers == {}  # "Then" waits for a failed step, "Also" for a skipped one
    assert [statuses[i] for i in record.ids[3:]] == [StepState.OPEN, StepState.OPEN]
