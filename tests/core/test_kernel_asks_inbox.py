"""A kernel's sub-agent asks in its own approver and in the store's inbox at once; the
first answer wins (issue 39). Real ollie-tasks processes on a SQLite file, a model that
obeys its step (tests/support/obedient_model.py, OpenAI wire format); the kernel's own
approver is a person at the widget (`Person`), answering only when the test says so."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.core import AgentConfig, Elsewhere, SharedApprover, Verdict
from ollie_nb.core._inbox_ask import InboxRequestOf
from ollie_nb.core._inbox_handle import _local_user
from ollie_nb.core._routing import StepScope
from ollie_nb.llm import OfflineBackend, OpenAIBackend
from ollie_nb.tasks import open_store
from tests.support.agents import tasks_agent
from tests.support.llm_fake_provider import FAKE_KEY
from tests.support.obedient_model import calls_reply, obey
from tests.support.waits import until

pytestmark = pytest.mark.slow  # ollie-tasks processes


class Person(SharedApprover):
    """The kernel's widget with a person before it: asked, it waits for `say` or the inbox
    (whichever comes first); `closed_by` keeps who answered in the inbox."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []  # (where: alone or beside, tool)
        self.closed_by: list[str] = []
        self._said: asyncio.Future[bool] | None = None

    def say(self, allowed: bool) -> None:
        assert self._said is not None, "nothing was asked"
        self._said.set_result(allowed)

    async def __call__(self, name: str, args: dict[str, Any]) -> bool:
        self.asked.append(("alone", name))
        self._said = asyncio.get_running_loop().create_future()
        return await self._said

    async def ask_beside(self, name: str, args: dict[str, Any], elsewhere: Elsewhere) -> Verdict:
        self.asked.append(("beside", name))
        self._said = asyncio.get_running_loop().create_future()
        remote = asyncio.ensure_future(elsewhere())
        await asyncio.wait({self._said, remote}, return_when=asyncio.FIRST_COMPLETED)
        if remote.done() and remote.result() is not None:
            verdict = remote.result()
            self.closed_by.append(verdict.by)
            return verdict
        remote.cancel()
        return Verdict(await self._said)

    def answer_time(self) -> float:
        return 60.0


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def requests(db: Path) -> list[tuple]:
    """Every inbox request: id, goal, step, asker, what, answer, answered_by."""
    if not db.exists():
        return []
    return rows(db, "SELECT id, goal, step, asker, what, answer, answered_by FROM inbox")


def title(db: Path, task: str) -> str:
    return rows(db, f"SELECT title FROM tasks WHERE id = '{task}'")[0][0]


async def kernel_with_a_plan(make_core, db: Path, provider) -> tuple[Any, Person, str]:
    """A kernel's core whose one plan's step renames a task outside its plan (a call that
    asks), its approver a Person: (core, person, the other task's id)."""
    with open_store(db) as store:
        other = store.create("Notes")
    person = Person()
    core = await make_core(OfflineBackend(), agent=tasks_agent(db), approve=person)
    order = json.dumps({"id": other, "title": "Renamed"})
    await core.submit(f"Tidy\n- Rename the notes: call task_edit with {order}")
    assert core.plans[-1].kind == "tasks" and len(core.plans[-1].ids) == 1
    provider.respond = obey
    core.set_backend(OpenAIBackend("gpt-4o-mini", base_url=provider.url + "/v1", api_key=FAKE_KEY))
    return core, person, other


@pytest.mark.anyio
async def test_a_sub_agents_call_answered_from_another_client_goes_on_and_closes_the_widget(
    make_core, tmp_path, provider
):
    db = tmp_path / "tasks.db"
    core, person, other = await kernel_with_a_plan(make_core, db, provider)
    record = core.plans[-1]
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    await until(lambda: requests(db), timeout=60, what="the sub-agent's inbox request")
    [(request, goal, step, asker, what, answer, _by)] = requests(db)
    assert (goal, step, answer) == (record.goal_id, record.ids[0], None)
    owner = f"{core.agent_name}@{core.session.session_id[-4:]}"
    assert asker == f"{owner}/worker1", asker
    assert what == f'task_edit {{"id": "{other}", "title": "Renamed"}}'
    assert person.asked == [("beside", "task_edit")]  # the widget was asked too
    teammate = await make_core(agent=tasks_agent(db))  # a second client of the store
    await teammate.inbox.answer(request, "allow", by="ann")
    result = await asyncio.wait_for(run, 60)
    assert not result.failed, result.summary
    assert person.closed_by == ["ann"]  # the widget closed saying who answered
    assert title(db, other) == "Renamed"  # the call ran
    assert rows(db, f"SELECT status FROM tasks WHERE id = '{step}'") == [("done",)]


@pytest.mark.anyio
async def test_answered_in_the_widget_the_inbox_request_is_answered_by_the_kernels_user(
    make_core, tmp_path, provider
):
    db = tmp_path / "tasks.db"
    core, person, other = await kernel_with_a_plan(make_core, db, provider)
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    await until(lambda: requests(db), timeout=60, what="the sub-agent's inbox request")
    person.say(False)  # Deny in the widget
    result = await asyncio.wait_for(run, 60)
    [(_id, _goal, _step, _asker, _what, answer, by)] = requests(db)
    assert (answer, by) == ("deny", _local_user())  # no board shows it open
    assert person.closed_by == []
    assert title(db, other) == "Notes"  # denied: it did not run
    assert not result.failed, result.summary  # the step still went on and marked itself done


@pytest.mark.anyio
async def test_the_agents_own_turn_asks_only_in_the_widget(make_core, tmp_path, provider):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        other = store.create("Notes")
    person = Person()
    backend = OpenAIBackend("gpt-4o-mini", base_url=provider.url + "/v1", api_key=FAKE_KEY)
    agent = tasks_agent(db, trustedTools=["reasoning_*"])  # task_edit asks in any turn
    core = await make_core(backend, agent=agent, approve=person)
    provider.respond = obey
    provider.queue(calls_reply([("task_edit", {"id": other, "title": "Renamed"})]))
    turn = asyncio.ensure_future(core.submit("rename the notes"))
    await until(lambda: person.asked, timeout=30, what="the widget asked")
    person.say(True)
    await asyncio.wait_for(turn, 30)
    assert person.asked == [("alone", "task_edit")]
    assert title(db, other) == "Renamed" and requests(db) == []  # nothing in the inbox


@pytest.mark.anyio
async def test_a_watch_turns_call_is_asked_in_the_inbox_as_the_watch(make_core, tmp_path, provider):
    db = tmp_path / "tasks.db"
    core, person, other = await kernel_with_a_plan(make_core, db, provider)
    await core.watch.start()
    await until(lambda: requests(db), timeout=60, what="the watch turn's inbox request")
    [(request, _goal, step, asker, _what, _answer, _by)] = requests(db)
    owner = f"{core.agent_name}@{core.session.session_id[-4:]}"
    assert (asker, step) == (f"{owner}/watch", core.plans[-1].ids[0])
    assert person.asked == [("beside", "task_edit")]
    teammate = await make_core(agent=tasks_agent(db))
    await teammate.inbox.answer(request, "allow", by="bob")
    await until(lambda: title(db, other) == "Renamed", timeout=60, what="the call to run")
    await core.watch.until_idle(60)
    assert person.closed_by == ["bob"]


@pytest.mark.anyio
async def test_a_stopped_run_denies_its_open_request(make_core, tmp_path, provider):
    db = tmp_path / "tasks.db"
    core, _person, other = await kernel_with_a_plan(make_core, db, provider)
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    await until(lambda: requests(db), timeout=60, what="the sub-agent's inbox request")
    core.interrupt()  # %ollie stop
    await asyncio.wait_for(run, 60)
    closed = lambda: [r[5:] for r in requests(db)] == [("deny", _local_user())]  # noqa: E731
    await until(closed, timeout=30, what="the request denied")
    assert title(db, other) == "Notes"


@pytest.mark.anyio
async def test_a_store_without_an_inbox_asks_in_the_widget_alone(make_core, fake_task_server):
    person = Person()
    agent = AgentConfig.from_dict({"mcpServers": fake_task_server()})
    core = await make_core(agent=agent, approve=person)
    await until(lambda: core.servers.task_client is not None, what="the task server wired")
    assert not core.servers.task_client.caps.inbox
    scope = StepScope("t-1", "t-0", frozenset({"t-1"}), "worker1")  # a sub-agent's step
    asked = asyncio.ensure_future(core.context.gate.approve.ask("task_edit", {"id": "t-9"}, scope))
    await until(lambda: person.asked, what="the widget asked")
    person.say(True)
    assert await asyncio.wait_for(asked, 10) is True
    assert person.asked == [("alone", "task_edit")]


@pytest.mark.anyio
async def test_a_widget_answer_after_an_inbox_answer_yields_to_it(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        goal = store.create("Tidy")
        step = store.create("Rename", "", goal)
    core = await make_core(agent=tasks_agent(db))
    scope = StepScope(step, goal, frozenset({step}), "worker1")
    request = InboxRequestOf(core.servers.task_client, "task_edit {}", "k@ab12/worker1", scope)
    waiting = asyncio.ensure_future(request.answer(30))
    await until(lambda: requests(db), what="the inbox request")
    waiting.cancel()  # the widget was answered: the kernel stops looking at the inbox
    [(asked, *_)] = requests(db)
    await core.inbox.answer(asked, "deny", by="ann")  # a teammate's answer got there first
    assert await request.close(True, "me") is False  # the store's answer counts
    assert [r[5:] for r in requests(db)] == [("deny", "ann")]
