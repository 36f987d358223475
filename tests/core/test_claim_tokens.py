"""Claim tokens on the agent's side: kept by the task-store gateway, presented for its own
calls and the model's, never shown to the model; a lost claim stops the step's work and
leaves the step to its new holder; leases as the server grants them.

Real `ollie-tasks` subprocesses on real SQLite files; every check reads the store.
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from ollie_nb.core import AgentConfig, AgentCore, Notice, WatchNotice
from ollie_nb.llm import Message, OfflineBackend, ToolCall
from ollie_nb.tasks import open_store
from tests.core.test_parallel_plans import claims_and_dones, event_log, slow_steps
from tests.support.agents import THIS_TREE, tasks_agent
from tests.support.waits import until

pytestmark = pytest.mark.slow

PAIR = "Two chores\n- Chore A (independent)\n- Chore B (independent)"


def kinds(db, kind: str) -> list[tuple[str, dict]]:
    return [(task, payload) for _, k, task, payload in event_log(db) if k == kind]


def served(db, *options: str, **extra) -> AgentConfig:
    """An agent on ollie-tasks started with `options` (`--max-lease 1`, `--endless-leases`)."""
    args = ["-m", "ollie_nb.tasks", "serve", "--db", str(db), *options]
    server = {"command": sys.executable, "args": args, "env": THIS_TREE}
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}, **extra})


def claiming_model(task_id: str):
    """A model that claims `task_id` itself, then marks it done, then answers."""

    async def reply(messages, tools):
        done = sum(1 for m in messages if m.role == "tool")
        if done == 0:
            args = {"id": task_id, "assignee": "me", "lease": 60}
            return Message.assistant("", [ToolCall("c1", "task_claim", json.dumps(args))])
        if done == 1:
            args = {"id": task_id, "status": "done"}
            return Message.assistant("", [ToolCall("c2", "task_update", json.dumps(args))])
        return Message.assistant("claimed and done")

    return reply


def test_the_model_claims_and_settles_a_task_without_ever_seeing_its_token(tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        task = store.create("Sweep")
    core = AgentCore(
        OfflineBackend(claiming_model(task)),
        agent=tasks_agent(db),
        workdir=tmp_path,
        autosave=False,
    )

    async def scenario():
        async with core:
            await core.submit("claim the sweep and finish it")
            return list(core.session.history)

    history = asyncio.run(scenario())
    answers = [m.content for m in history if m.role == "tool"]
    assert answers[0].startswith("claimed: ") and "lease: 60 s" in answers[0], answers
    assert not any("token" in str(m.content) for m in history), answers  # never shown
    assert answers[1].startswith("ok: "), answers  # the gateway presented the token
    with open_store(db, create=False) as store:
        assert store.get(task).status == "done"


def test_a_sub_agent_whose_claim_is_lost_stops_and_leaves_the_step_to_its_new_holder(tmp_path):
    db = tmp_path / "tasks.db"
    core = AgentCore(
        OfflineBackend(slow_steps(30)),
        agent=tasks_agent(db, claimLease=1),
        workdir=tmp_path,
        autosave=False,
    )
    notices: list[str] = []

    async def scenario():
        async with core:
            await core.submit("One chore\n- Sweep")
            step = core.plans[-1].ids[0]
            run = asyncio.ensure_future(
                core.runs.run_plan(1, on_event=lambda e: notices.append(e.text))
            )
            await until(lambda: kinds(db, "claimed"), what="the run's claim")
            with open_store(db, create=False) as store:  # bob takes it over (trusted access)
                store.update(step, status="open", assignee="bob")
                store.claim(step, "bob", lease=600)
            await until(lambda: any("was lost" in n for n in notices), what="the lost claim")
            await until(lambda: not core.subagents.children["worker1"].busy, what="a stop")
            run.cancel()  # the run waits for bob's step as for any other agent's: stopped
            return step, await run

    step, run = asyncio.run(scenario())
    lost = [n for n in notices if "the claim of step 1 " in n]
    assert lost and f"({step}) was lost: " in lost[0], notices
    assert step not in run.failed  # not the agent's to fail
    with open_store(db, create=False) as store:
        held = store.get(step)
    assert (held.status, held.assignee) == ("in_progress", "bob")  # never settled over bob
    assert claims_and_dones(db)[1] == {}


def test_a_watch_turn_whose_claim_is_lost_stops_and_leaves_the_step_to_its_new_holder(tmp_path):
    db = tmp_path / "tasks.db"
    agent = tasks_agent(db, claimLease=1)
    core = AgentCore(
        OfflineBackend(slow_steps(30)), agent=agent, workdir=tmp_path, name="carol", autosave=False
    )
    said: list[str] = []

    def sink(event):
        if isinstance(event, (Notice, WatchNotice)):
            said.append(event.text)

    async def scenario():
        async with core:
            await core.submit("One chore\n- Sweep")
            step = core.plans[-1].ids[0]
            await core.watch.start(on_event=sink)
            turn = asyncio.ensure_future(core.watch.until_idle(60))
            await until(lambda: kinds(db, "claimed"), what="the watch turn's claim")
            with open_store(db, create=False) as store:
                store.update(step, status="open", assignee="bob")
                store.claim(step, "bob", lease=600)
            await asyncio.wait_for(turn, 15)  # the turn stopped: not 30 s of work
            await core.watch.stop()
            return step

    step = asyncio.run(scenario())
    with open_store(db, create=False) as store:
        held = store.get(step)
    assert (held.status, held.assignee) == ("in_progress", "bob"), held  # not reopened
    assert any(f"the claim of step 1 ({step}) was lost: " in s for s in said), said
    assert claims_and_dones(db)[1] == {}


def test_heartbeats_follow_the_lease_the_server_granted_not_the_one_asked(tmp_path):
    db = tmp_path / "tasks.db"
    agent = served(db, "--max-lease", "1", claimLease=30)  # asked 30 s, granted 1 s
    core = AgentCore(OfflineBackend(slow_steps(2.5)), agent=agent, workdir=tmp_path, autosave=False)

    async def scenario():
        async with core:
            await core.submit(PAIR)
            return await core.runs.run_plan(parallel=2)

    run = asyncio.run(scenario())
    assert not run.failed, run.summary
    assert [p.get("lease") for _, p in kinds(db, "claimed")] == [1, 1]
    assert kinds(db, "lease_expired") == []  # renewed every third of the 1 s granted


def test_claim_lease_0_on_a_server_that_needs_leases_says_so_once_and_takes_its_default(
    tmp_path,
):
    db = tmp_path / "tasks.db"
    core = AgentCore(
        OfflineBackend(), agent=tasks_agent(db, claimLease=0), workdir=tmp_path, autosave=False
    )
    notes: list[str] = []

    async def scenario():
        async with core:
            await core.submit(PAIR)
            return await core.runs.run_plan(parallel=1, on_event=lambda e: notes.append(e.text))

    run = asyncio.run(scenario())
    assert not run.failed, run.summary
    told = [n for n in notes if "the task server needs leases" in n]
    assert len(told) == 1 and "claims take its default lease" in told[0], notes
    assert [p.get("lease") for _, p in kinds(db, "claimed")] == [300, 300]


def test_claim_lease_0_keeps_its_meaning_on_a_server_with_endless_leases(tmp_path):
    db = tmp_path / "tasks.db"
    agent = served(db, "--endless-leases", claimLease=0)
    core = AgentCore(OfflineBackend(), agent=agent, workdir=tmp_path, autosave=False)
    notes: list[str] = []

    async def scenario():
        async with core:
            await core.submit(PAIR)
            return await core.runs.run_plan(parallel=1, on_event=lambda e: notes.append(e.text))

    run = asyncio.run(scenario())
    assert not run.failed, run.summary
    assert not [n for n in notes if "needs leases" in n], notes
    assert [p.get("lease") for _, p in kinds(db, "claimed")] == [0, 0]
