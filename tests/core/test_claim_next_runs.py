"""A parallel run on a server with task_claim_next: one call claims each step, and a step its
child marked done is settled without reading it again (a real ollie-tasks subprocess)."""

from __future__ import annotations

from collections import Counter

import pytest

from ollie_nb.core import _parallel_run
from ollie_nb.planning import StepState
from ollie_nb.tasks import open_store
from tests.core.test_parallel_plans import claims_and_dones
from tests.core.test_parallel_reads import run_counting
from tests.support.agents import tasks_agent


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_run_claims_with_claim_next_and_settles_without_a_read(
    make_core, tmp_path, monkeypatch
):
    monkeypatch.setattr(_parallel_run, "REFRESH", 60.0)  # no refresh by age in this short run
    record, run, reads, calls, db = await run_counting(make_core, tmp_path, parallel=2)
    assert not run.failed and len(run.outcome) == 8, run.summary
    assert calls["task_claim_next"] == 8 and calls["task_claim"] == 0, calls
    # the plan's reads only (each a task_list of the goal): no read per settled step
    assert calls["task_list"] == len(reads) and calls["task_read"] == 0, (calls, reads)
    claims, dones = claims_and_dones(db)
    assert all(len(claims[i]) == 1 and len(dones[i]) == 1 for i in record.ids)


@pytest.mark.slow
@pytest.mark.anyio
async def test_one_steps_state_is_one_listing_of_its_id(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        task = store.create("Chore")
        store.update(task, status="failed")
    core = await make_core(agent=tasks_agent(db))
    client = core.servers.task_client
    calls: Counter[str] = Counter()
    call = client._call

    async def counted(tool, args):
        calls[tool] += 1
        return await call(tool, args)

    client._call = counted
    assert await client.status(task) is StepState.FAILED
    assert calls == Counter({"task_list": 1}), calls  # task_list(ids=[it]), never task_read
