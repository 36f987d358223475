"""Retry from a node on a task server without `task_reopen`: the steps are reopened with
`task_update` (the convention's tool), end open, and a run finishes them."""

from __future__ import annotations

import sys

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.llm import OfflineBackend
from ollie_nb.planning import StepState
from ollie_nb.tasks import open_store
from tests.core.test_parallel_plans import event_log
from tests.core.test_step_retry import CHAIN, failing, rows
from tests.support.agents import FIXTURES, THIS_TREE

pytestmark = pytest.mark.slow


def without_reopen(db) -> AgentConfig:
    """An agent whose task server is ollie-tasks on `db` with no task_reopen tool."""
    args = [str(FIXTURES / "tasks_without.py"), str(db), "task_reopen"]
    server = {"command": sys.executable, "args": args, "env": THIS_TREE}
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}})


@pytest.mark.anyio
async def test_retry_without_task_reopen_reopens_with_task_update(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    fail = {"Middle"}
    core = await make_core(OfflineBackend(failing(fail)), agent=without_reopen(db))
    await core.submit(CHAIN)
    record = core.plans[-1]
    middle, last, tail = record.ids[1:]
    assert (await core.runs.run_plan(parallel=2)).failed == [middle]
    with open_store(db, create=False) as store:
        store.update(last, status="cancelled", note="skipped: middle failed")
    fail.clear()
    assert not core.servers.task_client.caps.reopen
    assert await core.plans.retry(record.number, middle) == [middle, last, tail]
    after = rows(db)
    assert [after[s][0] for s in (middle, last, tail)] == ["open"] * 3
    # task_update cannot clear an assignee: the failed step keeps its holder's name
    # (docs/BOARD.md), which no claim refuses; the others never had one.
    assert after[middle][1] and (after[last][1], after[tail][1]) == ("", "")
    noted = [t for _, _, t, p in event_log(db) if p.get("note") == "retried (plan 1)"]
    assert noted == [middle, last, tail]
    assert not [p for _, _, _, p in event_log(db) if "reopened" in p]  # no task_reopen call
    assert (await core.runs.run_plan(parallel=2)).failed == []
    assert await core.plans.statuses(record) == dict.fromkeys(record.ids, StepState.DONE)
