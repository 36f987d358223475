"""What a parallel run reads of its task server: its plan's states not after every step,
each settled step by a one-task read, and, for claimers sharing a plan, its own order.

Real ollie-tasks subprocesses on SQLite files; the reads are counted on the agent's
TaskClient, the claims read from the store's event log.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from ollie_nb.core import AgentCore, _parallel_run
from ollie_nb.llm import OfflineBackend
from tests.core.test_parallel_plans import claims_and_dones, event_log, slow_steps
from tests.support.agents import tasks_agent

EIGHT = "Eight chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 9))


def run_counting(tmp_path, **run_args):
    """Draft EIGHT, run it with `run_args`; (record, run, plan reads, calls by tool)."""
    db = tmp_path / "tasks.db"
    core = AgentCore(
        OfflineBackend(slow_steps(0.0)), agent=tasks_agent(db), workdir=tmp_path, autosave=False
    )

    async def scenario():
        async with core:
            await core.submit(EIGHT)
            record = core.plans[-1]
            reads: list[int] = []
            calls: Counter[str] = Counter()
            plan_statuses, client = core.plans.statuses, core.servers.task_client
            call = client._call  # the one place the client calls a tool

            async def counted_read(plan):
                reads.append(plan.number)
                return await plan_statuses(plan)

            async def counted_call(tool, args):
                calls[tool] += 1
                return await call(tool, args)

            core.plans.statuses, client._call = counted_read, counted_call
            run = await core.runs.run_plan(**run_args)
            return record, run, reads, calls

    return (*asyncio.run(scenario()), db)


def test_a_run_reads_its_plan_when_its_view_runs_out_not_after_every_step(tmp_path, monkeypatch):
    monkeypatch.setattr(_parallel_run, "REFRESH", 60.0)  # no refresh by age in this short run
    record, run, reads, calls, db = run_counting(tmp_path, parallel=1)
    assert not run.failed and len(run.outcome) == 8, run.summary
    # the first read, the one when the view shows nothing left to start, the end state;
    # never one per step (a plan of 200 steps was read 200 times)
    assert len(reads) <= 3, reads
    assert calls["task_read"] == 0, calls  # each settled step: task_list(ids=[it]) only
    claims, dones = claims_and_dones(db)
    assert all(len(claims[i]) == 1 and len(dones[i]) == 1 for i in record.ids)


def test_a_spread_run_takes_the_ready_steps_in_an_order_of_its_own(tmp_path):
    record, run, _reads, _calls, db = run_counting(tmp_path, parallel=1, spread=True)
    assert not run.failed, run.summary
    order = [task for _, kind, task, _ in event_log(db) if kind == "claimed"]
    assert sorted(order) == sorted(record.ids)  # each step once
    assert order != list(record.ids)  # not the plan's order (1 chance in 40,320 that it is)
