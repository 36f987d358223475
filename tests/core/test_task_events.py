"""The reactive agent: task events on ollie-tasks wake it, and it works its plan by itself.

Every test runs real `ollie-tasks` server subprocesses on a real SQLite file; the
"other client" is a second AgentCore in its own process (tests/support/fixtures/second_agent.py)
with its own server process on the same database, so its changes reach the watching
agent's server from outside. Waits are bounded polls, never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys

import pytest

from ollie_nb.core import ToolCalled, TurnStarted, WatchNotice, WatchWhat
from ollie_nb.errors import NoTaskServerError
from ollie_nb.llm import LLMError, OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from tests.support.agents import FIXTURES, tasks_agent
from tests.support.waits import until

PROMPT = "Ship the report\n- Collect data\n- Clean data\n- Publish"
SECOND_AGENT = FIXTURES / "second_agent.py"


def statuses(db) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT title, status FROM tasks"))


def done_events(db) -> list[str]:
    """The step ids of every `status_changed ... to done` in the server's event log, in order.

    A goal that ollie-tasks closes itself with its last step (reason `children_done`)
    is left out; `closed_goals` lists those.
    """
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT task, payload FROM events WHERE type = 'status_changed'")
        changes = [(task, json.loads(payload)) for task, payload in rows]
    return [t for t, p in changes if p["to"] == "done" and p.get("reason") != "children_done"]


def closed_goals(db) -> list[str]:
    """The goals ollie-tasks closed because their last step was done."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT task, payload FROM events WHERE type = 'status_changed'")
        return [t for t, p in rows if json.loads(p).get("reason") == "children_done"]


async def second_agent(db, name: str, *calls: dict) -> list[str]:
    """Run task_update calls as another agent, in another process with its own server."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SECOND_AGENT),
        str(db),
        name,
        json.dumps(list(calls)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()[-2000:]
    return out.decode().splitlines()


def updated_ids(events) -> list[str]:
    return [e.args["id"] for e in events if isinstance(e, ToolCalled) and e.tool == "task_update"]


@pytest.mark.anyio
async def test_watch_on_works_the_whole_plan_by_itself(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db), autosave=True)
    events: list = []
    await core.submit(PROMPT)
    watcher = await core.watch.start(on_event=events.append)
    await core.watch.until_idle(timeout=30)
    mode = watcher.mode
    await core.watch.stop()
    record = core.plans[-1]
    await core.aclose()  # the store is read as the agent left it
    assert mode == "subscribed"
    assert updated_ids(events) == list(record.ids)  # each step once, in plan order
    assert done_events(db) == list(record.ids)
    assert closed_goals(db) == [record.goal_id]
    watch = [e.text for e in events if isinstance(e, WatchNotice)]
    assert watch[0] == f"step 1 of plan 1 is ready ({record.ids[0]}); queued"
    assert watch[-1] == "plan 1 is finished: Ship the report (all 3 steps done)"


@pytest.mark.anyio
async def test_two_agents_in_two_processes_the_watcher_carries_on_after_the_other(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db), name="alice", autosave=True)
    events: list = []
    await core.submit(PROMPT)
    ids = list(core.plans[-1].ids)
    await second_agent(db, "bob", {"id": ids[0], "status": "in_progress", "assignee": "bob"})
    await core.watch.start(on_event=events.append)
    assert core.prompts.texts == []  # step 1 is bob's, steps 2 and 3 wait for it
    await second_agent(db, "bob", {"id": ids[0], "status": "done"})
    await until(lambda: statuses(db)["Publish"] == "done")
    await core.watch.until_idle(timeout=30)
    await core.watch.stop()
    await core.aclose()  # the store is read as the agent left it
    assert updated_ids(events) == ids[1:]  # alice worked steps 2 and 3, no user action
    assert done_events(db) == ids  # every step done exactly once
    assert len(closed_goals(db)) == 1
    watch = [e.text for e in events if isinstance(e, WatchNotice)]
    other = f"step 1 of plan 1 is done ({ids[0]}), marked by another client: Collect data"
    assert watch[0] == other
    starts = [e.prompt for e in events if isinstance(e, TurnStarted)]
    assert starts[0].startswith(f"Step 2 of 3 [task {ids[1]}]: Clean data")
    assert starts[0].endswith(f"[task events since your last turn]\n{other}")  # the note
    assert "[task events" not in starts[1]


@pytest.mark.anyio
async def test_assignment_by_another_client_queues_the_step_and_a_failed_step_is_reported(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db), name="alice", autosave=True)
    events: list = []
    await core.submit(PROMPT)
    ids = list(core.plans[-1].ids)
    await second_agent(db, "bob", {"id": ids[0], "status": "in_progress", "assignee": "bob"})
    await core.watch.start(on_event=events.append)
    await second_agent(
        db,
        "bob",
        {"id": ids[2], "status": "failed"},
        {"id": ids[0], "status": "open", "assignee": "alice"},  # bob hands it over
    )
    await until(lambda: statuses(db)["Clean data"] == "done")
    await core.watch.until_idle(timeout=30)
    await core.watch.stop()
    await core.aclose()  # the store is read as the agent left it
    assert updated_ids(events) == ids[:2]  # the assigned step, then the one it unblocked
    assert statuses(db)["Publish"] == "failed"
    watch = [(e.what, e.text) for e in events if isinstance(e, WatchNotice)]
    failed = f"step 3 of plan 1 is failed ({ids[2]}), marked by another client: Publish"
    assert (WatchWhat.FAILED, failed) in watch
    assert (WatchWhat.QUEUED, f"step 1 of plan 1 is assigned to you ({ids[0]}); queued") in watch
    starts = [e.prompt for e in events if isinstance(e, TurnStarted)]
    assert starts[0].startswith(f"Step 1 of 3 [task {ids[0]}]: Collect data")
    assert "(assigned to you, alice; plan: Ship the report)" in starts[0]
    assert failed in starts[0]  # told at its next turn
    assert not any(w == "finished" for w, _ in watch)


@pytest.mark.anyio
async def test_a_new_watcher_and_a_restarted_agent_lose_nothing_and_queue_nothing_twice(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db), autosave=True)
    await core.submit(PROMPT)
    ids = list(core.plans[-1].ids)
    await second_agent(db, "bob", {"id": ids[0], "status": "in_progress"})
    await core.watch.start(wake=False)
    await second_agent(db, "bob", {"id": ids[0], "status": "done"})
    await until(lambda: len(core.prompts.texts) == 1)
    await core.watch.start(wake=False)  # a new watcher: the step is not queued again
    await core.watch.catch_up()
    queued = list(core.prompts.texts)
    await core.watch.stop()
    session = core.session.session_id
    await core.aclose()  # the store is read as the agent left it
    assert len(queued) == 1 and queued[0].startswith(f"Step 2 of 3 [task {ids[1]}]")

    # the kernel restarted: the session comes back, the queue not
    again = await make_core(agent=tasks_agent(db), autosave=True)
    again.session.restore(session)
    events: list = []
    await again.watch.start(on_event=events.append)
    await again.watch.until_idle(timeout=30)
    await again.watch.stop()
    await again.aclose()  # the store is read as the agent left it
    assert updated_ids(events) == ids[1:]
    assert done_events(db) == ids
    assert len(closed_goals(db)) == 1


@pytest.mark.anyio
async def test_the_approval_gate_applies_to_turns_the_agent_starts_itself(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    asked: list[str] = []

    def deny(name, args):
        asked.append(name)
        return False

    config = tasks_agent(db, trustedTools=["task_create"])
    core = await make_core(agent=config, approve=deny, autosave=True)
    await core.submit(PROMPT)
    asked.clear()
    await core.watch.start()
    await core.watch.until_idle(timeout=30)
    await core.watch.stop()
    await core.aclose()  # the store is read as the agent left it
    assert asked == ["task_update"]  # step 1's update was asked for, refused, and not run again
    assert statuses(db)["Collect data"] == "open"


@pytest.mark.anyio
async def test_a_failing_turn_ends_the_watch_with_a_clear_message(make_core, tmp_path):
    db = tmp_path / "tasks.db"

    def model(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            raise LLMError("the provider is down")
        return demo_reply(messages, tools)

    core = await make_core(OfflineBackend(model), agent=tasks_agent(db), autosave=True)
    events: list = []
    await core.submit(PROMPT)
    await core.watch.start(on_event=events.append)
    await until(lambda: core.watch.watcher is None)
    await core.watch.until_idle(timeout=10)
    stopped = [e.text for e in events if isinstance(e, WatchNotice) and e.what is WatchWhat.STOPPED]
    assert stopped == [
        "a turn the agent started itself failed: the provider is down; "
        "the watch is off (turn it on again to go on)"
    ]
    assert sum(1 for e in events if isinstance(e, TurnStarted)) == 1  # no loop of failures


@pytest.mark.anyio
async def test_a_server_without_subscriptions_is_polled(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db), autosave=True)
    await core.submit(PROMPT)
    ids = list(core.plans[-1].ids)
    await core.servers.dispatcher.dispatch(
        "tasks", "task_update", {"id": ids[0], "status": "in_progress"}
    )
    server = core.servers.dispatcher.get_server("tasks")
    server.resource_updates = None  # a server that offers no subscription
    watcher = await core.watch.start(interval=0.1, wake=False)
    await second_agent(db, "bob", {"id": ids[0], "status": "done"})
    await until(lambda: len(core.prompts.texts) == 1)
    mode, queued = watcher.mode, list(core.prompts.texts)
    await core.watch.stop()
    assert mode == "polling"
    assert queued[0].startswith(f"Step 2 of 3 [task {ids[1]}]")


@pytest.mark.anyio
async def test_watching_needs_a_task_server_with_events(make_core, tmp_path):
    core = await make_core(autosave=True)
    with pytest.raises(NoTaskServerError, match="no task server is wired"):
        await core.watch.start()
    assert await core.run_queue() is None


@pytest.mark.anyio
async def test_after_stop_of_a_turn_the_watch_started_the_next_step_waits(make_core, tmp_path):
    """`%ollie stop` of a step the agent started itself: the watch goes off, the rest waits."""
    db = tmp_path / "tasks.db"

    async def model(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            await asyncio.sleep(30)  # stopped long before
        return demo_reply(messages, tools)

    core = await make_core(OfflineBackend(model), agent=tasks_agent(db), autosave=True)
    events: list = []
    await core.submit("Two chores\n- Chore 1 (independent)\n- Chore 2 (independent)")
    await core.watch.start(on_event=events.append)
    await until(lambda: core.is_running, what="the watch's first turn")
    assert core.interrupt()
    await until(lambda: core.watch.waker is None, what="the watch going off")
    await until(lambda: not core.is_running, what="the stopped turn's end")
    await until(lambda: not core.prompts.texts, what="the watch's step off the queue")
    _ = core.plans[-1]
    queued = list(core.prompts.texts)
    await core.aclose()  # the store is read as the agent left it
    starts = [e.prompt.splitlines()[0] for e in events if isinstance(e, TurnStarted)]
    assert len(starts) == 1 and starts[0].startswith("Step 1 of 2")  # the second never started
    assert queued == []  # the watch is off: the step it had queued went with it
    assert statuses(db) == {"Two chores": "open", "Chore 1": "open", "Chore 2": "open"}
    stopped = [e.text for e in events if isinstance(e, WatchNotice) and e.what is WatchWhat.STOPPED]
    assert stopped == [
        "a turn the agent started itself was interrupted; "
        "the watch is off (turn it on again to go on)"
    ]


@pytest.mark.anyio
async def test_more_than_a_page_of_events_in_one_change_are_all_read(
    make_core, tmp_path, monkeypatch
):
    """One change by another client brings more events than one read returns: each
    unblocked step is queued all the same, with no later change to wake the watch."""
    monkeypatch.setattr(
        "ollie_nb.core._event_reader.PAGE", 2
    )  # a small page; the server's own limit
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db), name="alice", autosave=True)
    fan = "Fan out\n- Root\n- Left (after 1)\n- Middle (after 1)\n- Right (after 1)"
    await core.submit(fan)
    ids = list(core.plans[-1].ids)
    await second_agent(db, "bob", {"id": ids[0], "status": "in_progress"})
    watcher = await core.watch.start(wake=False)
    assert watcher.mode == "subscribed" and core.prompts.texts == []
    await second_agent(db, "bob", {"id": ids[0], "status": "done"})  # one change
    await until(lambda: len(core.prompts.texts) == 3, what="the three unblocked steps queued")
    queued = list(core.prompts.texts)
    await core.watch.stop()
    assert [q.split("]")[0] for q in queued] == [
        f"Step {n} of 4 [task {ids[n - 1]}" for n in (2, 3, 4)
    ]


@pytest.mark.anyio
async def test_the_watch_never_queues_a_step_whose_blocker_was_skipped(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db), name="alice", autosave=True)
    events: list = []
    await core.submit(PROMPT)
    ids = list(core.plans[-1].ids)
    skipped = {"id": ids[1], "status": "cancelled"}
    await second_agent(db, "bob", {"id": ids[0], "status": "done"}, skipped)
    await core.watch.start(on_event=events.append)  # it reads every step's state
    await core.watch.until_idle(timeout=30)
    await core.watch.stop()
    await core.aclose()  # the store is read as the agent left it
    assert not any(isinstance(e, WatchNotice) and e.what is WatchWhat.QUEUED for e in events)
    assert updated_ids(events) == [] and statuses(db)["Publish"] == "open"
