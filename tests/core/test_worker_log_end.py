"""A worker's and a reader's start on a long event log: read from the log's end, in one call.

A real ollie-tasks subprocess on a SQLite file with 5,000 events; the task_events calls are
counted on the agent's TaskClient (the one place it calls a tool).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ollie_nb.core._worker import Worker, WorkOptions
from ollie_nb.tasks import open_store
from ollie_nb.tasks._store import _now
from tests.core.test_parallel_plans import claims_and_dones
from tests.support.agents import tasks_agent
from tests.support.waits import until

EVENTS = 5000


def long_log(db: Any) -> tuple[str, int]:
    """A goal whose one step is done, behind EVENTS note events (one transaction); the goal
    and the log's last seq."""
    with open_store(db) as store:
        goal = store.create("Chores")
        step = store.create("Chore 1", parent=goal)
        store.update(step, status="done")

        def notes(conn: Any) -> None:
            for n in range(EVENTS):
                store._event(conn, _now(), "updated", step, {"note": f"note {n}"})

        store._run(notes, write=True)
        return goal, store.last_seq()


def count_events_calls(client: Any) -> list[dict[str, Any]]:
    """The arguments of each task_events call `client` makes from now on."""
    calls: list[dict[str, Any]] = []
    call = client._call

    async def counted(tool: str, args: dict[str, Any]) -> Any:
        if tool == "task_events":
            calls.append(dict(args))
        return await call(tool, args)

    client._call = counted
    return calls


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_worker_starts_from_the_logs_end_and_picks_up_a_new_step(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    goal, last = long_log(db)
    core = await make_core(agent=tasks_agent(db), name="w1")
    calls = count_events_calls(core.servers.task_client)
    lines: list[str] = []
    worker = Worker(core, WorkOptions("tasks", name="w1", every=True), lines.append)
    run = asyncio.ensure_future(worker.run())
    try:
        await until(lambda: worker.waits == "signal", 60, "the worker waiting on the signal")
        assert calls[0].get("tail") is True, calls  # the log's end, in one call
        assert all(c.get("tail") or c["since"] >= last for c in calls), calls  # no old page
        with open_store(db) as store:
            new = store.create("Chore 2", parent=goal)
        await until(lambda: new in claims_and_dones(db)[1], 60, "the new step done")
    finally:
        worker.stop("SIGTERM")
        assert await run == 143


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_newest_events_are_read_from_the_end(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    _goal, last = long_log(db)
    core = await make_core(agent=tasks_agent(db))
    client = core.servers.task_client
    calls = count_events_calls(client)
    assert await client.head() == last
    newest = await client.newest(3)
    assert [e["seq"] for e in newest] == [last - 2, last - 1, last]
    assert len(calls) == 2, calls  # one read each, never a page from the start


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_watch_starts_from_the_logs_end(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    _goal, last = long_log(db)
    core = await make_core(agent=tasks_agent(db))
    calls = count_events_calls(core.servers.task_client)
    watcher = await core.watch.start(wake=False)
    try:
        assert watcher.seq == last
        assert calls[0].get("tail") is True, calls  # the log's end, in one call
        assert all(c.get("tail") or c["since"] >= last for c in calls), calls  # no old page
    finally:
        await core.watch.stop()
