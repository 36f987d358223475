"""Retry from a node: a failed step and the steps failed, skipped or held back after it are
reopened (status open, no assignee) on a real ollie-tasks store, and worked again by a
parallel run or a headless worker as any open ready step."""

from __future__ import annotations

import sqlite3

import pytest

from ollie_nb.errors import StepRetryError
from ollie_nb.llm import LLMError, OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import StepState, Task, read_step, retry_steps
from ollie_nb.tasks import InvalidTaskError, open_store
from tests.core.test_parallel_plans import event_log
from tests.core.test_workers import agent_file, start_worker
from tests.support.agents import tasks_agent
from tests.support.waits import until

CHAIN = "Chain\n- First\n- Middle (after 1)\n- Last (after 2)\n- Tail (after 3)"
DONE, FAILED, OPEN = StepState.DONE, StepState.FAILED, StepState.OPEN


def rows(db) -> dict[str, tuple[str, str]]:
    """Each task's status and assignee, read straight from SQLite."""
    with sqlite3.connect(db) as conn:
        return {t: (s, a) for t, s, a in conn.execute("SELECT id, status, assignee FROM tasks")}


def failing(titles: set[str]):
    """The demo planner; a step whose title is in `titles` (as it is at that turn) errors."""

    async def reply(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            step = read_step(last.content)
            if step is not None and step.title in titles:
                raise LLMError("the model broke down on this step")
        return demo_reply(messages, tools)

    return reply


async def failed_chain(make_core, db):
    """A core whose chain plan ran with its middle step failing; the last step then
    skipped (cancelled) by a person and the tail left waiting: the core and the plan."""
    fail = {"Middle"}
    core = await make_core(OfflineBackend(failing(fail)), agent=tasks_agent(db))
    await core.submit(CHAIN)
    run = await core.runs.run_plan(parallel=2)
    record = core.plans[-1]
    middle, last = record.ids[1:3]
    assert run.failed == [middle]
    with open_store(db, create=False) as store:
        store.update(last, status="cancelled", assignee="someone", note="skipped: middle failed")
    fail.clear()  # the model works every step from now on
    return core, record


@pytest.mark.slow
@pytest.mark.anyio
async def test_retry_reopens_the_failed_step_and_those_after_it_and_a_run_finishes_them(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    core, record = await failed_chain(make_core, db)
    first, middle, last, tail = record.ids
    reopened = await core.plans.retry(record.number, "2")  # by its number in the plan
    assert reopened == [middle, last, tail]
    after = rows(db)
    assert after[first] == ("done", after[first][1])  # a done step is left as it is
    assert [after[s] for s in (middle, last, tail)] == [("open", "")] * 3
    kinds = [(k, t, p.get("reopened")) for _, k, t, p in event_log(db) if "reopened" in p]
    assert kinds == [
        ("updated", middle, "failed"),
        ("updated", last, "cancelled"),
        ("updated", tail, "open"),
    ]
    run = await core.runs.run_plan(parallel=2)
    assert run.failed == []
    assert await core.plans.statuses(record) == dict.fromkeys(record.ids, DONE)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_retried_chain_is_finished_by_a_headless_worker(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core, record = await failed_chain(make_core, db)
    await core.plans.retry(record.number, record.ids[1])  # by its id
    await core.aclose()
    worker = start_worker(tmp_path, agent_file(tmp_path, db), "w1", "--until-idle")
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err[-2000:]
    after = rows(db)
    assert [after[s][0] for s in record.ids] == ["done"] * 4, out


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_done_step_or_an_unknown_one_is_not_retried(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core, record = await failed_chain(make_core, db)
    with pytest.raises(StepRetryError, match="is done"):
        await core.plans.retry(record.number, record.ids[0])
    with pytest.raises(StepRetryError, match="has no step '9'"):
        await core.plans.retry(record.number, 9)
    assert rows(db)[record.ids[1]][0] == "failed"  # nothing reopened


def test_retry_steps_follows_waiting_steps_transitively_and_skips_done_and_worked_ones():
    tasks = [
        Task("a", state=DONE),
        Task("b", state=FAILED, blockers=("a",)),
        Task("c", state=StepState.CANCELLED, blockers=("b",)),
        Task("d", state=OPEN, blockers=("c",)),
        Task("e", state=StepState.IN_PROGRESS, blockers=("b",)),
        Task("f", state=OPEN, blockers=("e",)),
        Task("g", state=OPEN),
    ]
    assert retry_steps(tasks, "b") == ["b", "c", "d"]
    with pytest.raises(ValueError, match="no step z"):
        retry_steps(tasks, "z")


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_watch_works_the_steps_a_retry_reopened(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core, record = await failed_chain(make_core, db)  # the run's steps: never queued by the watch
    await core.watch.start()
    await core.watch.until_idle(60)  # nothing is ready: the middle step failed
    assert [rows(db)[s][0] for s in record.ids] == ["done", "failed", "cancelled", "open"]
    await core.plans.retry(record.number, record.ids[1])
    await until(lambda: [rows(db)[s][0] for s in record.ids] == ["done"] * 4, 60, "all done")
    await core.watch.stop()


def test_the_store_reopens_a_failed_step_without_its_assignee_and_refuses_a_done_one(tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        failed, done = store.create("Broke"), store.create("Fine")
        store.update(failed, status="failed", assignee="w1")
        store.update(done, status="done")
        assert store.reopen(failed, "try again") == "failed"
        with pytest.raises(InvalidTaskError, match="is done"):
            store.reopen(done)
    assert rows(db)[failed] == ("open", "") and rows(db)[done][0] == "done"
    reopened = [p for _, k, t, p in event_log(db) if k == "updated" and t == failed][-1]
    assert reopened == {"reopened": "failed", "assignee": "", "note": "try again"}
