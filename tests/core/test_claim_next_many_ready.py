"""A parallel run over more ready steps than one task_claim_next call offers (NEXT_CHOICES)
claims every one of them, each once, with no call offering more than the cap (a real
ollie-tasks subprocess on a real SQLite file)."""

from __future__ import annotations

import pytest

from ollie_nb.core import _parallel_run
from ollie_nb.llm import OfflineBackend
from tests.core.test_parallel_plans import claims_and_dones, slow_steps
from tests.support.agents import tasks_agent

STEPS = _parallel_run.NEXT_CHOICES + 30
MANY = "Many chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, STEPS + 1))


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_run_over_more_ready_steps_than_one_claim_offers_claims_them_all(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    core = await make_core(OfflineBackend(slow_steps(0.0)), agent=tasks_agent(db))
    await core.submit(MANY)
    record = core.plans[-1]
    assert len(record.ids) == STEPS
    client = core.servers.task_client
    call, offered = client._call, []  # the one place the client calls a tool

    async def counted_call(tool, args):
        if tool == "task_claim_next":
            offered.append(len(args.get("ids", ())))
        return await call(tool, args)

    client._call = counted_call
    run = await core.runs.run_plan(parallel=4)
    await core.aclose()  # the store is read as the run and the agent left it
    assert not run.failed and len(run.outcome) == STEPS, run.summary
    assert len(offered) == STEPS and max(offered) == _parallel_run.NEXT_CHOICES, offered
    claims, dones = claims_and_dones(db)
    assert all(len(claims[i]) == 1 and len(dones[i]) == 1 for i in record.ids)
