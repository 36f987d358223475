"""`ollie-work --ask`: a call that needs approval waits in the task store's inbox and is
answered from elsewhere (a kernel's core, the CLI); real ollie-tasks and worker processes,
a model that obeys its step (tests/support/obedient_model.py, OpenAI wire format)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.core._worker import Worker, WorkOptions
from ollie_nb.planning import APPROVED_LABEL
from ollie_nb.tasks import open_store
from tests.core.test_workers import agent_file, start_worker
from tests.support.agents import tasks_agent
from tests.support.obedient_model import model_env, obey
from tests.support.tasks_harness import cli
from tests.support.waits import until

pytestmark = pytest.mark.slow  # ollie-tasks and worker processes


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def plan_with_a_call_beyond_its_step(db: Path) -> tuple[str, str]:
    """An approved plan whose one step renames a task outside its plan (a call that asks):
    (the step's id, the other task's id)."""
    with open_store(db) as store:
        other = store.create("Notes")
        goal = store.create("Tidy", labels=[APPROVED_LABEL])
        order = json.dumps({"id": other, "title": "Renamed"})
        step = store.create("Rename the notes", f"call task_edit with {order}", goal)
    return step, other


def worker(tmp: Path, db: Path, provider, *args: str, lease: float = 10) -> subprocess.Popen:
    provider.respond = obey
    agent = agent_file(tmp, db, lease=lease)
    return start_worker(
        tmp, agent, "w1", "--until-idle", *args, every=False, model=model_env(provider)
    )


def open_requests(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    return rows(db, "SELECT id, goal, step, asker, what FROM inbox WHERE answer IS NULL")


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def title(db: Path, task: str) -> str:
    return rows(db, f"SELECT title FROM tasks WHERE id = '{task}'")[0][0]


@pytest.mark.anyio
async def test_a_parked_call_answered_allow_from_a_kernel_runs_and_the_step_finishes(
    tmp_path, provider, make_core
):
    db = tmp_path / "tasks.db"
    step, other = plan_with_a_call_beyond_its_step(db)
    proc = worker(tmp_path, db, provider, "--ask", "--ask-timeout", "60", lease=2)
    await until(lambda: open_requests(db), timeout=60, what="the worker's request")
    [(request, _, asked_step, asker, what)] = open_requests(db)
    assert (asked_step, asker) == (step, "w1") and what.startswith("task_edit {")
    lease = rows(db, f"SELECT status, assignee, lease_until FROM tasks WHERE id = '{step}'")
    assert lease[0][0] == "in_progress" and lease[0][1].startswith("w1@")  # still claimed
    renewed = f"SELECT lease_until FROM tasks WHERE id = '{step}' AND lease_until > {lease[0][2]}"
    await until(lambda: rows(db, renewed), timeout=20, what="a heartbeat while waiting")
    kernel = await make_core(agent=tasks_agent(db))  # a kernel's core answers it
    assert kernel.inbox.available and [r.id for r in await kernel.inbox.open()] == [request]
    await kernel.inbox.answer(request, "allow", by="ann")
    await until(lambda: proc.poll() is not None, timeout=60, what="the worker's exit")
    code, out, err = finished(proc)
    assert code == 0, err[-2000:]
    assert title(db, other) == "Renamed"  # the call ran
    assert rows(db, f"SELECT status FROM tasks WHERE id = '{step}'") == [("done",)]
    assert f"answered: {request} allow by ann" in out, out


@pytest.mark.anyio
async def test_a_deny_from_the_cli_refuses_the_call_as_without_ask(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _step, other = plan_with_a_call_beyond_its_step(db)
    proc = worker(tmp_path, db, provider, "--ask")
    await until(lambda: open_requests(db), timeout=60, what="the worker's request")
    [(request, *_)] = open_requests(db)
    assert cli(db, "answer", request, "deny", "--by", "ann").returncode == 0
    again = cli(db, "answer", request, "allow", "--by", "bob")
    assert again.returncode == 1 and "answered already by ann" in again.stderr
    await until(lambda: proc.poll() is not None, timeout=60, what="the worker's exit")
    code, _out, err = finished(proc)
    assert code == 0, err[-2000:]
    assert title(db, other) == "Notes"  # refused: it did not run
    results = [m for r in provider.requests if r.method == "POST" for m in r.body["messages"]]
    assert any("was not approved; it did not run" in str(m.get("content")) for m in results)


def test_an_unanswered_request_times_out_as_a_denial(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _step, other = plan_with_a_call_beyond_its_step(db)
    code, out, err = finished(worker(tmp_path, db, provider, "--ask", "--ask-timeout", "1"))
    assert code == 0, err[-2000:]
    assert title(db, other) == "Notes"
    assert "was not answered in time: denied" in out, out
    assert rows(db, "SELECT answer FROM inbox") == [(None,)]  # expired, never answered


@pytest.mark.anyio
async def test_answers_from_others_than_the_named_users_are_denied(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _step, other = plan_with_a_call_beyond_its_step(db)
    proc = worker(tmp_path, db, provider, "--ask", "--answers-from", "bob,carol")
    await until(lambda: open_requests(db), timeout=60, what="the worker's request")
    [(request, *_)] = open_requests(db)
    assert cli(db, "answer", request, "allow", "--by", "mallory").returncode == 0
    await until(lambda: proc.poll() is not None, timeout=60, what="the worker's exit")
    code, out, err = finished(proc)
    assert code == 0, err[-2000:]
    assert title(db, other) == "Notes"
    assert f"{request} was answered by mallory, not by bob, carol: denied" in out, out


def test_without_ask_the_call_is_refused_and_nothing_is_asked(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _step, other = plan_with_a_call_beyond_its_step(db)
    code, out, err = finished(worker(tmp_path, db, provider))
    assert code == 0, err[-2000:]
    assert title(db, other) == "Notes" and rows(db, "SELECT id FROM inbox") == []
    assert " refused: " in out, out


@pytest.mark.anyio
async def test_a_store_without_the_inbox_is_named_and_calls_are_refused_as_before(
    make_core, fake_task_server
):
    core = await make_core(agent=AgentConfig.from_dict({"mcpServers": fake_task_server()}))
    await until(lambda: core.servers.task_client is not None, what="the task server wired")
    lines: list[str] = []
    Worker(core, WorkOptions("agent.json", ask=True), lines.append)._ask_the_inbox()
    assert core.approve is None  # no one to ask: refused as without --ask
    assert lines == [
        "--ask: the task store has no inbox (an ollie-tasks extension): calls that need "
        "approval are refused"
    ]
