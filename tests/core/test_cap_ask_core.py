"""A kernel's core with asking at caps on (`ask_at_caps`): a parallel run at its plan cap
pauses on one inbox request, answered from a second task client; real ollie-tasks
subprocesses and SQLite, the offline model (words count as tokens)."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from ollie_nb.core import AgentConfig, AgentCore, Budgets, Caps, Notice
from ollie_nb.core._budget import BudgetExceededError, CapKind, Ledger, Scope
from ollie_nb.core._cap_ask import cap_question
from ollie_nb.llm import OfflineBackend
from ollie_nb.planning import Spend, StepState, read_state
from tests.core.test_budget_runs import WIDE, wordy_step
from tests.support.agents import tasks_agent
from tests.support.waits import until

pytestmark = pytest.mark.slow  # ollie-tasks subprocesses


async def capped_core(make_core, db, on: bool = True) -> AgentCore:
    """A core whose plan runs may spend 600 tokens (a few steps of one worker), asking on."""
    core = await make_core(OfflineBackend(wordy_step("", 0.0)), agent=tasks_agent(db), start=False)
    core.user_budgets = Budgets(plan=Caps(tokens=600))
    core.cap_ask.on, core.cap_ask.timeout = on, 30.0
    await core.start()
    await core.submit(WIDE)
    return core


async def open_caps(client) -> list:
    return [r for r in await client.inbox("open") if r.kind == "cap"]


def asked(db) -> bool:
    """Whether a cap request waits in the store (read from its database, as a board would)."""
    with sqlite3.connect(db) as conn:
        return bool(
            conn.execute("SELECT 1 FROM inbox WHERE kind = 'cap' AND answer IS NULL").fetchall()
        )


@pytest.mark.anyio
async def test_a_run_at_its_cap_pauses_and_a_raise_from_another_client_finishes_it(
    make_core, tmp_path
):
    db = tmp_path / "t.db"
    core = await capped_core(make_core, db)
    record = core.plans[-1]
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    other = (await make_core(agent=tasks_agent(db))).servers.task_client  # a second client
    await until(lambda: asked(db), timeout=60, what="the cap request")
    [request] = await open_caps(other)
    assert request.asker == core.agent_name and request.goal == record.goal_id
    assert request.step in record.ids
    assert request.what.startswith("plan 1 reached its 600-token cap: ")
    assert not run.done()  # paused on the answer
    await other.answer(request.id, "raise:100000", "ann")
    result = await asyncio.wait_for(run, 60)
    assert not result.capped and not result.over_cap and not result.failed
    states = {k: read_state(v) for k, v in (await core.plans.statuses(record)).items()}
    assert set(states.values()) == {StepState.DONE}
    assert len([r for r in await other.inbox("all") if r.kind == "cap"]) == 1


@pytest.mark.anyio
async def test_a_stop_answer_ends_the_run_as_without_asking(make_core, tmp_path):
    db = tmp_path / "t.db"
    core = await capped_core(make_core, db)
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    client = core.servers.task_client
    await until(lambda: asked(db), timeout=60, what="the cap request")
    [request] = await open_caps(client)
    await client.answer(request.id, "stop", "ann")
    result = await asyncio.wait_for(run, 60)
    assert result.capped.startswith("plan 1's token cap 600 is reached: ")
    states = {k: read_state(v) for k, v in (await core.plans.statuses(core.plans[-1])).items()}
    assert StepState.OPEN in states.values() and StepState.IN_PROGRESS not in states.values()


def _reached() -> BudgetExceededError:
    ledger = Ledger(Scope.PLAN, lambda: Caps(tokens=1), name="1")
    return BudgetExceededError(Scope.PLAN, "1", CapKind.TOKENS, 1, ledger.spend, ledger=ledger)


@pytest.mark.anyio
async def test_asking_off_or_a_store_without_an_inbox_stops_at_once(
    make_core, tmp_path, fake_task_server
):
    core = await capped_core(make_core, tmp_path / "t.db", on=False)
    result = await asyncio.wait_for(core.runs.run_plan(parallel=1), 60)
    assert result.capped and await open_caps(core.servers.task_client) == []
    assert not core.cap_ask.will_ask(_reached())
    with core.cap_ask.during():  # one run's --ask
        assert core.cap_ask.will_ask(_reached())
    with core.cap_ask.during(False):
        assert not core.cap_ask.will_ask(_reached())
    plain = await make_core(agent=AgentConfig.from_dict({"mcpServers": fake_task_server()}))
    await until(lambda: plain.servers.task_client is not None, what="the task server wired")
    plain.cap_ask.on = True
    error = _reached()
    assert not plain.cap_ask.will_ask(error)  # no inbox: no one to ask
    assert not await asyncio.wait_for(plain.cap_ask.settle(error, None), 5)


def test_the_question_names_the_cap_the_spend_and_the_answers():
    ledger = Ledger(Scope.PLAN, lambda: Caps(cost=0.5), name="2")
    error = BudgetExceededError(Scope.PLAN, "2", CapKind.COST, 0.5, Spend(10, 0.51), ledger=ledger)
    assert cap_question(error) == (
        "plan 2 reached its $0.50 cap: $0.51 spent; raise by N dollars (raise:N) / stop"
    )


@pytest.mark.anyio
async def test_a_turn_at_the_session_cap_waits_tells_the_cell_and_goes_on_when_raised(
    make_core, tmp_path
):
    db = tmp_path / "t.db"
    core = await make_core(agent=tasks_agent(db), start=False)
    core.user_budgets = Budgets(session=Caps(tokens=1))  # reached by the first reply
    core.cap_ask.on = True
    await core.start()
    assert (await core.submit("hello")).reply
    events: list = []
    turn = asyncio.ensure_future(core.submit("again", on_event=events.append))
    await until(lambda: asked(db), timeout=30, what="the cap request")
    [request] = await open_caps(core.servers.task_client)
    assert request.what.startswith("the session reached its 1-token cap: ")
    assert (request.goal, request.step) == ("", "")  # no plan step: none named
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert notes == [f"asked: {request.id} {request.what} (waits 300 s for an answer)"]
    await core.servers.task_client.answer(request.id, "raise:1000000", "ann")
    result = await asyncio.wait_for(turn, 30)
    assert result.reply and not result.capped
    assert [e.text for e in events if isinstance(e, Notice)][-1] == (
        f"answered: {request.id} raise by 1,000,000 tokens"
    )
