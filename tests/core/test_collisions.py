"""Features used together: the watch, parallel runs, Stop, the queue and sub-agents work each
step once, and done work stays done (issue 22's first items), checked from the task server's
own event log (real `ollie-tasks` subprocesses on real SQLite files).
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from ollie_nb.core import TurnStarted, WatchNotice, WatchWhat
from ollie_nb.core._sessions import plan_to_dict
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import Origin, QueuedPrompt, StepState, read_step
from tests.core.test_parallel_plans import DIAMOND, PARALLEL_AGENT, WIDE, event_log, slow_steps
from tests.support.agents import tasks_agent
from tests.support.waits import until


def claims(db) -> dict[str, list[str]]:
    """Per task: the assignees of its claims, in the server's order."""
    found: dict[str, list[str]] = {}
    for _, kind, task, payload in event_log(db):
        if kind == "claimed":
            found.setdefault(task, []).append(payload["assignee"])
    return found


def changes(db, task: str) -> list[tuple[str, str]]:
    return [
        (p.get("from"), p.get("to"))
        for _, kind, t, p in event_log(db)
        if kind == "status_changed" and t == task
    ]


def steps_turned(events) -> list[str]:
    """The step ids of the turns the agent itself worked (from its TurnStarted events)."""
    return [e.step.step_id for e in events if isinstance(e, TurnStarted) and e.step is not None]


@pytest.mark.anyio
async def test_watch_on_then_parallel_3_on_a_diamond_each_step_is_worked_once(make_core, tmp_path):
    """`%ollie watch on`, then `%ollie run --parallel 3` on 1 -> 3 -> 1: the watch queues each
    step on its "unblocked" event, the run claims it; exactly one of them works it."""
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(slow_steps(0.3)), agent=tasks_agent(db))
    watched: list = []
    await core.submit(DIAMOND)
    await core.watch.start(on_event=watched.append)
    run = await core.runs.run_plan(parallel=3)
    await core.watch.until_idle(60)
    await core.watch.stop()
    record = core.plans[-1]
    await core.aclose()  # the store is read as the agent left it
    by_agent, by_workers = steps_turned(watched), list(run.workers)
    assert sorted(by_agent + by_workers) == sorted(record.ids), (by_agent, by_workers)
    held = claims(db)
    for step_id in record.ids:  # one claim each: its one worker's
        assert len(held.get(step_id, [])) == 1, (step_id, held)
        assert changes(db, step_id).count(("in_progress", "done")) == 1
    for step_id in by_agent:
        assert held[step_id] == [core.agent_name]
    assert all(StepState(s) is StepState.DONE for s in run.states.values()), (run, watched)
    assert core.prompts.texts == []


@pytest.mark.anyio
async def test_a_watching_kernel_and_a_parallel_run_in_another_process_work_each_step_once(
    make_core, tmp_path
):
    """Kernel A made the plan and watches it; kernel B (its own process, AgentCore and
    ollie-tasks server on the same database) runs it with `--parallel 3`."""
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(slow_steps(0.3)), agent=tasks_agent(db), name="alice")
    watched: list = []
    await core.submit(DIAMOND)
    record = core.plans[-1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PARALLEL_AGENT),
        str(db),
        json.dumps(plan_to_dict(record)),
        "bob",
        "3",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"ready\n"
    await core.watch.start(interval=0.2, on_event=watched.append)
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    await until(lambda: not core.is_running and not core.prompts.texts, 60, "alice idle")
    await core.watch.until_idle(60)
    await core.watch.stop()
    theirs = out.decode().split()
    err = err.decode()
    await core.aclose()  # the store is read as the agent left it
    mine = steps_turned(watched)
    assert sorted(mine + theirs) == sorted(record.ids), (mine, theirs, err[-2000:])
    held = claims(db)
    for step_id in record.ids:
        assert len(held.get(step_id, [])) == 1, (step_id, held)
        assert changes(db, step_id).count(("in_progress", "done")) == 1, changes(db, step_id)


async def _done_then_wait(messages, tools):
    """A step's worker marks its task done, then waits (a Stop comes meanwhile)."""
    last = messages[-1]
    if last.role == "tool" and last.name == "task_update":
        await asyncio.sleep(60)
    elif (
        is_step_prompt(last.content) and getattr(read_step(last.content), "title", "") != "Chore 1"
    ):
        await asyncio.sleep(60)  # the other steps are still at work when Stop comes
    return demo_reply(messages, tools)


@pytest.mark.anyio
async def test_stop_during_a_parallel_run_never_reopens_a_step_its_worker_had_done(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(_done_then_wait), agent=tasks_agent(db))
    await core.submit(WIDE)
    record = core.plans[-1]
    first = record.ids[0]
    run = asyncio.ensure_future(core.runs.run_plan(parallel=3))

    async def first_done() -> bool:
        return (await core.plans.statuses(record)).get(first) == "done"

    for _ in range(1000):
        if await first_done():
            break
        await asyncio.sleep(0.02)
    assert core.interrupt()  # %ollie stop / the Stop button
    result = await asyncio.wait_for(run, 10)
    statuses = await core.plans.statuses(record)
    await core.aclose()  # the store is read as the agent left it
    first, others = record.ids[0], record.ids[1:3]
    assert result.interrupted
    assert statuses[first] == "done" and result.outcome[first] is StepState.DONE
    assert ("done", "open") not in changes(db, first)  # never reopened
    assert [statuses[s] for s in others] == ["open", "open"], (result, statuses)
    assert result.states[first] is StepState.DONE


@pytest.mark.anyio
async def test_turning_the_watch_off_removes_the_steps_it_queued_and_says_how_many(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(slow_steps(60)), agent=tasks_agent(db))
    watched: list = []
    await core.submit(WIDE)
    await core.watch.start(on_event=watched.append)  # 8 ready steps queued
    await until(lambda: steps_turned(watched), 20, "the watch's first step turn")
    core.prompts.put("the user's own prompt")
    queued_steps = sum(i.origin is Origin.WATCH for i in core.prompts.items)
    dropped = await core.watch.stop()
    left = core.prompts.items
    assert queued_steps == 7 and dropped == 7
    assert left == [QueuedPrompt("the user's own prompt")]  # the user's own prompt stays
    notes = [e.text for e in watched if isinstance(e, WatchNotice) and e.what is WatchWhat.NOTE]
    assert notes == ["the watch is off: 7 steps it had queued left the queue"]


@pytest.mark.anyio
async def test_a_step_the_agent_finished_is_done_in_the_runs_states(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(slow_steps(0.01)), agent=tasks_agent(db))
    await core.submit(DIAMOND)
    record = core.plans[-1]
    args = {"id": record.ids[0], "status": "done"}  # the main agent did step 1
    assert not (await core.servers.dispatcher.dispatch("tasks", "task_update", args)).is_error
    run = await core.runs.run_plan(parallel=3)
    assert record.ids[0] not in run.workers
    assert run.states == dict.fromkeys(record.ids, StepState.DONE)
    assert run.summary == "plan 1: 4 steps done by sub-agents"


@pytest.mark.anyio
async def test_workers_are_named_as_workers_and_reused_n_at_most(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(slow_steps(0.1)), agent=tasks_agent(db))
    await core.submit(WIDE)
    run = await core.runs.run_plan(parallel=2)
    assert set(run.workers.values()) == {"worker1", "worker2"}
    assert sorted(core.subagents.children) == ["worker1", "worker2"]
    assert sum(c.turns for c in core.subagents.children.values()) == 8


@pytest.mark.anyio
async def test_the_sessions_usage_counts_every_request_of_its_sub_agents(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    sent: list[int] = []
    inner = slow_steps(0.05)

    async def counting(messages, tools):
        sent.append(len(messages))
        return await inner(messages, tools)

    core = await make_core(OfflineBackend(counting), agent=tasks_agent(db))
    await core.submit(DIAMOND)
    parent = core.session.usage.requests
    await core.runs.run_plan(parallel=3)
    assert parent == 2 and len(sent) == 2 + 5 * 2  # each step: task_update, then the reply
    assert core.session.usage.requests == len(sent)
    assert str(core.session.usage).startswith(f"{len(sent)} requests, ")
    children = sum(c.usage.output_tokens for c in core.subagents.children.values())
    assert children > 0 and core.session.usage.output_tokens > children


@pytest.mark.anyio
async def test_plans_are_found_by_their_goal_text(make_core, tmp_path):
    from ollie_nb.errors import NoPlanError

    core = await make_core(queue_fallback=True)
    await core.submit("Ship it\n- Pack\n- Send (after 1)")
    await core.submit("Ship the docs\n- Write\n- Publish (after 1)")
    await core.submit("Clean the garage\n- Sort\n- Sweep (after 1)")
    assert core.plans.find("Ship it").number == 1  # the exact goal (also a prefix of none)
    assert core.plans.find("ship the DOCS").number == 2
    assert core.plans.find("clean").number == 3  # a prefix
    assert core.plans.find("garage").number == 3  # a substring
    assert core.plans.find("no such goal") is None
    try:
        core.plans.find("ship")
    except NoPlanError as exc:
        assert str(exc) == (
            "2 plans match 'ship' (1: Ship it; 2: Ship the docs); give the plan's number"
        )
    else:
        raise AssertionError("an ambiguous goal was not refused")


@pytest.mark.anyio
async def test_session_names_are_unique_and_a_name_given_early_is_saved_with_the_first_prompt(
    make_core, tmp_path, monkeypatch
):
    from ollie_nb.core import list_sessions
    from ollie_nb.errors import SessionError

    monkeypatch.setenv("OLLIE_DATA_DIR", str(tmp_path / "data"))
    first = await make_core(autosave=True)
    second = await make_core(autosave=True)
    assert first.session.rename("beta") is None  # nothing said yet: saved with the first prompt
    await first.submit("hello")
    assert [s.name for s in list_sessions()] == ["beta"]
    await second.submit("hi")
    first.session.rename("alpha")
    with pytest.raises(SessionError) as raised:
        second.session.rename("alpha")
    refused = str(raised.value)
    assert refused == (
        f"a saved session is named 'alpha' already ({first.session.session_id}); choose another name"
    )
    names = {s.id: s.name for s in list_sessions()}
    assert names == {first.session.session_id: "alpha", second.session.session_id: ""}
    assert second.session.session_name == ""
