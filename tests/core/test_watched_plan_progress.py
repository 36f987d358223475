"""A task-server plan the watch works tells how far it is at each step's start and end,
as a queue plan does: a background header's bar counts the plan's steps, not queue places.

A real `ollie-tasks` subprocess on a real SQLite file.
"""

from __future__ import annotations

import pytest

from ollie_nb.core import PlanProgress
from ollie_nb.planning import StepState
from tests.support.agents import tasks_agent

pytestmark = pytest.mark.slow

CHAIN = "Cook dinner\n- a\n- b\n- c"  # the demo planner chains a list: each after the last


@pytest.mark.anyio
async def test_the_watch_tells_a_task_plans_progress_at_each_steps_start_and_end(
    make_core, tmp_path
):
    core = await make_core(agent=tasks_agent(tmp_path / "tasks.db"))
    await core.submit(CHAIN)
    plan = core.plans[-1]
    assert plan.kind == "tasks" and len(plan.ids) == 3
    events: list = []
    await core.watch.start(on_event=events.append)
    await core.watch.until_idle(60)
    await core.watch.stop()
    told = [e for e in events if isinstance(e, PlanProgress)]
    assert [(e.plan, e.done, e.total) for e in told] == [
        (plan.number, done, 3) for done in (0, 1, 1, 2, 2, 3)
    ]  # as each step starts (claimed), and once it ends (done)
    first, last = told[0].states, told[-1].states
    assert first == {
        plan.ids[0]: StepState.IN_PROGRESS,
        plan.ids[1]: StepState.OPEN,
        plan.ids[2]: StepState.OPEN,
    }
    assert last == dict.fromkeys(plan.ids, StepState.DONE)
