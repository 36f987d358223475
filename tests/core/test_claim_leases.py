"""Claims with leases: a long step stays claimed (heartbeats), a dead claimer's steps reopen.

Real `ollie-tasks` subprocesses on real SQLite files; the dead claimer is another process
(tests/support/fixtures/parallel_agent.py) SIGKILLed mid-step. Every check reads the task
server's event log.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ollie_nb.core import WatchWhat
from ollie_nb.core._sessions import plan_to_dict
from ollie_nb.llm import OfflineBackend
from ollie_nb.planning import Origin, StepState, step_item
from ollie_nb.tasks import open_store
from tests.core.test_parallel_plans import (
    PARALLEL_AGENT,
    claims_and_dones,
    event_log,
    slow_steps,
)
from tests.support.agents import tasks_agent
from tests.support.waits import wait_until

PAIR = "Two chores\n- Chore A (independent)\n- Chore B (independent)"
FOUR = "Four chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 5))


def kinds(db, kind: str) -> list[tuple[str, dict]]:
    return [(task, payload) for _, k, task, payload in event_log(db) if k == kind]


@pytest.mark.anyio
async def test_a_step_worked_longer_than_its_lease_stays_claimed(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(slow_steps(2.5)), agent=tasks_agent(db, claimLease=1))
    await core.submit(PAIR)
    record = core.plans[-1]
    run = await core.runs.run_plan(parallel=2)
    await core.aclose()  # the store is read as the agent left it
    assert not run.failed, run.summary
    assert kinds(db, "lease_expired") == []  # renewed every third of a second... of the lease
    claims, dones = claims_and_dones(db)
    for step_id in record.ids:
        assert len(claims[step_id]) == 1 and len(dones[step_id]) == 1, (claims, dones)
    leases = [p.get("lease") for task, p in kinds(db, "claimed")]
    assert leases and all(lease == 1 for lease in leases), leases  # the setting, not 300 s


def wait_claims(db, who: str, count: int, within: float = 60.0) -> list[str]:
    def held() -> list[str]:
        claimed = kinds(db, "claimed") if db.exists() else []
        return [t for t, p in claimed if p.get("assignee", "").startswith(who)]

    wait_until(lambda: len(held()) >= count, within, f"{who}'s claim of {count} steps")
    return held()


@pytest.mark.anyio
async def test_the_steps_of_a_sigkilled_claimer_reopen_by_lease_and_another_agent_finishes_them(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    lease = 1.5
    backend = OfflineBackend(slow_steps(0.2))
    core = await make_core(backend, agent=tasks_agent(db, claimLease=lease), name="alice")
    run_notices: list = []
    await core.submit(FOUR)
    record = core.plans[-1]
    args = [str(db), json.dumps(plan_to_dict(record)), "bob", "2", str(lease), "60"]
    doomed = subprocess.Popen(
        [sys.executable, str(PARALLEL_AGENT), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    try:
        held = await asyncio.to_thread(wait_claims, db, "bob", 2)
        doomed.send_signal(signal.SIGKILL)
    finally:
        doomed.kill()
        doomed.wait(10)
    killed = time.monotonic()
    read = core.plans.statuses
    stale = [dict.fromkeys(record.ids, StepState.OPEN)]  # as read just before bob's claims

    async def first_read_stale(plan):
        return stale.pop() if stale else await read(plan)

    core.plans.statuses = first_read_stale  # alice tries all four; bob holds two
    run = await asyncio.wait_for(core.runs.run_plan(parallel=2, on_event=run_notices.append), 60)
    took = time.monotonic() - killed
    await core.aclose()  # the store is read as the agent left it
    assert not run.failed, run.summary
    assert sorted(run.workers) == sorted(record.ids)  # alice worked all four in the end
    expired = kinds(db, "lease_expired")
    assert sorted(t for t, _ in expired) == sorted(held)
    assert all(p["assignee"].startswith("bob") for _, p in expired)
    claims, dones = claims_and_dones(db)
    for step_id in record.ids:
        assert len(dones.get(step_id, [])) == 1, (step_id, dones)  # done exactly once
        assert len(claims[step_id]) == (2 if step_id in held else 1), claims
    assert took < lease + 10, took
    refused = [n for n in run_notices if n.what is WatchWhat.SKIPPED]
    assert sorted(n.step_id for n in refused) == sorted(held)  # the race was lost, then retried


@pytest.mark.anyio
async def test_a_step_the_watch_has_the_agent_work_is_claimed_and_renewed_through_its_turn(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(2.5))
    core = await make_core(backend, agent=tasks_agent(db, claimLease=1), name="carol")
    await core.submit("One chore\n- Sweep")
    await core.watch.start()
    await core.watch.until_idle(60)
    await core.watch.stop()
    record = core.plans[-1]
    await core.aclose()  # the store is read as the agent left it
    claimed = kinds(db, "claimed")
    assert [(t, p["assignee"], p.get("lease")) for t, p in claimed] == [(record.ids[0], "carol", 1)]
    assert kinds(db, "lease_expired") == []  # a 2.5 s turn on a 1 s lease: renewed
    _, dones = claims_and_dones(db)
    assert len(dones[record.ids[0]]) == 1


DURABLE_AGENT = PARALLEL_AGENT.with_name("durable_agent.py")


def wait_events(db, check, within: float = 60.0) -> None:
    wait_until(lambda: db.exists() and check(claims_and_dones(db)), within, "the dying kernel")


def wait_saved(data, step_ids, within: float = 30.0) -> None:
    """Until the saved session holds the tool round that marked each step done (a kill
    between the store's update and the round's save would lose only that round)."""

    def saved() -> bool:
        text = "".join(p.read_text(errors="replace") for p in data.rglob("*.json"))
        return all(f"ok: {step_id}  [done]" in text for step_id in step_ids)

    wait_until(saved, within, f"the saved rounds of {step_ids}")


@pytest.mark.anyio
async def test_a_run_resumed_after_its_kernel_died_completes_with_no_step_worked_twice(
    make_core, tmp_path, monkeypatch
):
    db = tmp_path / "tasks.db"
    monkeypatch.setenv("OLLIE_DATA_DIR", str(tmp_path / "data"))
    lease = 1.5
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "") + os.pathsep + "."}
    dying = subprocess.Popen(
        [sys.executable, str(DURABLE_AGENT), str(db), str(lease), "1.5", FOUR],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert dying.stdout is not None
        session_id = dying.stdout.readline().strip()
        # two steps done, the other two claimed, the done ones' rounds saved: it dies there
        wait_events(db, lambda cd: len(cd[1]) >= 2 and len(cd[0]) >= 4)
        wait_saved(tmp_path / "data", list(claims_and_dones(db)[1]))
        dying.send_signal(signal.SIGKILL)
    finally:
        dying.kill()
        dying.wait(10)
    claims_before, dones_before = claims_and_dones(db)
    # in the dead kernel's workdir, saving as it did
    core = await make_core(
        OfflineBackend(slow_steps(0.2)),
        agent=tasks_agent(db, claimLease=lease),
        workdir=os.getcwd(),
        autosave=True,
    )
    note = await core.session.resume(session_id)
    children = {c.name: [m.content for m in c.history] for c in core.subagents.children.values()}
    run = await asyncio.wait_for(core.runs.run_plan(parallel=2), 60)
    await core.aclose()  # the store is read as the agent left it
    record = core.plans[-1]
    assert "plan 1 was being worked in parallel" in note, note
    done_before = set(dones_before)
    held_before = set(claims_before) - done_before
    assert len(done_before) >= 2 and held_before
    # the workers that worked the steps done before the death came back with their tool rounds
    # (a worker killed mid-step may have saved its prompt only)
    for step_id in done_before:
        worked = [h for h in children.values() if any(step_id in text for text in h)]
        assert worked and all(len(h) >= 3 for h in worked), (step_id, children)
    assert sorted(run.workers) == sorted(set(record.ids) - done_before)  # the rest only
    claims, dones = claims_and_dones(db)
    for step_id in record.ids:
        assert len(dones.get(step_id, [])) == 1, (step_id, dones)
        assert len(claims[step_id]) == (2 if step_id in held_before else 1), claims
    assert sorted(t for t, _ in kinds(db, "lease_expired")) == sorted(held_before)


@pytest.mark.anyio
async def test_a_watch_step_another_claimer_took_first_is_not_worked_here(make_core, tmp_path):
    """The watch queued a step, then another claimer took it before the turn: the claim is
    refused, the turn is blocked and the step stays the other claimer's."""
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db))
    await core.submit(PAIR)
    record = core.plans[-1]
    with open_store(db, create=False) as store:
        store.claim(record.ids[0], "holder")
    item = step_item(record, 0, Origin.WATCH, goal=record.goal)
    result = await core.submit(item)
    await core.aclose()  # the store is read as the agent left it
    assert result.blocked, result  # refused by the store: not worked here
    step = record.ids[0]
    by = [p["assignee"] for _, k, t, p in event_log(db) if k == "claimed" and t == step]
    assert by == ["holder"], by
    _claims, dones = claims_and_dones(db)
    assert step not in dones, dones
