"""A parallel run's headline says its spend once, also when its own cap stopped it."""

from __future__ import annotations

import pytest

from ollie_nb.core import Budgets, Caps
from ollie_nb.core._parallel_run import ParallelRunResult
from ollie_nb.planning import Spend, StepState

THREE = "Three chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 4))


@pytest.mark.anyio
async def test_a_run_stopped_by_its_plan_cap_states_its_spend_once(make_core):
    core = await make_core(queue_fallback=True)
    core.user_budgets = Budgets(plan=Caps(tokens=10))
    await core.submit(THREE)
    core.prompts.clear()  # its steps are worked by the run below, not by the queue
    run = await core.runs.run_plan(parallel=1)
    used = run.total.tokens
    assert used > 10
    assert run.headline == (
        f"plan 1: 1 step done by sub-agents; stopped: plan 1's token cap 10 is reached: "
        f"{used:,} tokens used so far ($0.0000)"
    )


def test_a_run_without_its_cap_reached_says_its_spend_after_the_summary():
    run = ParallelRunResult(1, outcome={"q1": StepState.DONE}, spend={"q1": Spend(1234)})
    assert run.headline == "plan 1: 1 step done by sub-agents (1,234 tokens, $0.0000)"
