"""`ollie-work --ask` at a spend cap: the worker pauses on one inbox request of kind `cap`,
answered from elsewhere (a kernel's core, the CLI); real ollie-tasks and worker processes,
a model that obeys its step (tests/support/obedient_model.py: 74 tokens a request)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from ollie_nb.planning import APPROVED_LABEL
from ollie_nb.tasks import open_store
from tests.core.test_workers import agent_file, start_worker
from tests.support.agents import tasks_agent
from tests.support.obedient_model import model_env, obey
from tests.support.tasks_harness import cli
from tests.support.waits import until

pytestmark = pytest.mark.slow  # ollie-tasks and worker processes

CAP = 100  # plan tokens: the first step's two requests (148 tokens) reach it


def rows(db: Path, sql: str) -> list[tuple]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def plan(db: Path, fan_out: bool = False) -> tuple[str, list[str]]:
    """An approved plan of a first step and two more (after it with `fan_out`, so both
    start together once it is done): (goal id, step ids)."""
    with open_store(db) as store:
        goal = store.create("Chores", labels=[APPROVED_LABEL])
        first = store.create("Chore 1", parent=goal)
        after = [first] if fan_out else []
        rest = [store.create(f"Chore {i}", parent=goal, blockers=after) for i in (2, 3)]
    return goal, [first, *rest]


def worker(tmp: Path, db: Path, provider, *args: str) -> subprocess.Popen:
    provider.respond = obey
    agent = agent_file(tmp, db, maxPlanTokens=CAP)
    return start_worker(
        tmp, agent, "w1", "--until-idle", *args, every=False, model=model_env(provider)
    )


def cap_requests(db: Path, open_only: bool = True) -> list[tuple]:
    where = "kind = 'cap'" + (" AND answer IS NULL" if open_only else "")
    return rows(db, f"SELECT id, goal, step, asker, what FROM inbox WHERE {where}")


def states(db: Path, steps: list[str]) -> list[str]:
    return [rows(db, f"SELECT status FROM tasks WHERE id = '{s}'")[0][0] for s in steps]


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=90)
    return proc.returncode, out, err


@pytest.mark.anyio
async def test_a_worker_at_its_plan_cap_asks_and_a_raise_from_a_kernel_finishes_the_plan(
    tmp_path, provider, make_core
):
    db = tmp_path / "tasks.db"
    goal, steps = plan(db)
    proc = worker(tmp_path, db, provider, "--ask", "--ask-timeout", "60")
    await until(lambda: cap_requests(db), timeout=60, what="the worker's cap request")
    [(request, asked_goal, asked_step, asker, what)] = cap_requests(db)
    assert (asked_goal, asker) == (goal, "w1") and asked_step in steps
    assert what.startswith(f"plan 1 reached its {CAP}-token cap: 148 tokens used; raise by N")
    assert states(db, [asked_step]) == ["in_progress"]  # paused, still claimed
    kernel = await make_core(agent=tasks_agent(db))  # another client answers
    await kernel.inbox.answer(request, "raise:1000", by="ann")
    code, out, err = finished(proc)
    assert code == 0, err[-2000:]
    assert states(db, steps) == ["done"] * 3
    assert f"answered: {request} raise by 1,000 tokens" in out, out
    assert len(cap_requests(db, open_only=False)) == 1  # 370 tokens: within the raised cap


@pytest.mark.anyio
async def test_answered_stop_hands_the_steps_back_and_the_worker_exits_1(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _goal, steps = plan(db)
    proc = worker(tmp_path, db, provider, "--ask")
    await until(lambda: cap_requests(db), timeout=60, what="the worker's cap request")
    [(request, *_)] = cap_requests(db)
    assert cli(db, "answer", request, "stop", "--by", "ann").returncode == 0
    code, out, err = finished(proc)
    assert code == 1, err[-2000:]
    assert sorted(states(db, steps)) == ["done", "open", "open"]  # handed back, as without --ask
    assert f"stopped: {request} answered stop" in out, out
    assert "plan 1's token cap 100 is reached" in out and "handed back" in out, out


@pytest.mark.anyio
async def test_two_steps_meeting_one_cap_ask_once_and_both_follow_the_answer(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _goal, steps = plan(db, fan_out=True)  # steps 2 and 3 start together at the cap
    proc = worker(tmp_path, db, provider, "--ask", "--ask-timeout", "20", "--parallel", "2")
    await until(lambda: cap_requests(db), timeout=60, what="the worker's cap request")
    await until(
        lambda: states(db, steps[1:]) == ["in_progress"] * 2, timeout=20, what="both claimed"
    )
    [(request, *_)] = cap_requests(db)
    assert cli(db, "answer", request, "raise:1000", "--by", "ann").returncode == 0
    code, _out, err = finished(proc)
    assert code == 0, err[-2000:]
    assert states(db, steps) == ["done"] * 3
    assert [r[0] for r in cap_requests(db, open_only=False)] == [request]  # asked once


def test_without_ask_a_cap_stops_the_worker_and_nothing_is_asked(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _goal, steps = plan(db)
    code, out, err = finished(worker(tmp_path, db, provider))
    assert code == 1, err[-2000:]
    assert sorted(states(db, steps)) == ["done", "open", "open"]
    assert rows(db, "SELECT id FROM inbox") == []
    assert "plan 1's token cap 100 is reached" in out, out
