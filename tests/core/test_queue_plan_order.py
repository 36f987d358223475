"""A queue plan stays in order after a cap or Stop: the stopped step goes back to the front of
the queue and stays open, and a step whose blocker failed is not worked."""

from __future__ import annotations

import asyncio

import pytest

from ollie_nb.core import Budgets, Caps, Notice, PlanProgress
from ollie_nb.llm import LLMError, OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import StepState, read_step
from tests.support.waits import until

CHAIN = "Cook dinner\n- a\n- b\n- c\n- d"  # the demo planner chains a list: each after the last
OPEN, DONE, FAILED = StepState.OPEN, StepState.DONE, StepState.FAILED


def recording(worked: list[str], on_step=None):
    """The demo planner, noting each step title it is asked to work (`on_step` may act first)."""

    async def reply(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            step = read_step(last.content)
            assert step is not None
            worked.append(step.title)
            if on_step is not None:
                await on_step(step.title)
        return demo_reply(messages, tools)

    return reply


def states(core) -> dict[str, StepState]:
    return core.plans.book.queue_states(core.plans[-1])


def queued(core) -> list[str]:
    return [item.step.step_id for item in core.prompts.items if item.step is not None]


@pytest.mark.anyio
async def test_a_step_a_cap_stops_goes_back_first_and_the_run_after_raising_it_continues(
    make_core,
):
    worked: list[str] = []
    core = await make_core(OfflineBackend(recording(worked)), queue_fallback=True)
    core.user_budgets = Budgets(session=Caps(tokens=700))
    result = await core.submit(CHAIN)
    assert result.capped
    assert states(core) == {"q1": DONE, "q2": DONE, "q3": OPEN, "q4": OPEN}
    assert queued(core) == ["q3", "q4"]  # the capped step first, not lost
    core.user_budgets = Budgets()  # the cap raised
    events: list = []
    await core.run_queue(events.append)
    assert worked == ["a", "b", "c", "d"]
    shown = [(e.done, e.total) for e in events if isinstance(e, PlanProgress)]
    assert shown == [(2, 4), (3, 4), (3, 4), (4, 4)]  # as each step starts, and once it ends
    assert states(core) == dict.fromkeys(["q1", "q2", "q3", "q4"], DONE)


@pytest.mark.anyio
async def test_a_step_whose_blocker_failed_is_not_worked(make_core):
    worked: list[str] = []

    async def fail_b(title: str) -> None:
        if title == "b":
            raise LLMError("the model broke down")

    core = await make_core(OfflineBackend(recording(worked, fail_b)), queue_fallback=True)
    events: list = []
    await core.submit(CHAIN, events.append)
    assert worked == ["a", "b"]  # c waits for the failed b, d for the unworked c
    assert states(core) == {"q1": DONE, "q2": FAILED, "q3": OPEN, "q4": OPEN}
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert "step 3 (q3) is not worked: it waits for q2 (failed)" in notices
    assert "step 4 (q4) is not worked: it waits for q3 (open)" in notices


@pytest.mark.anyio
async def test_a_step_stopped_by_stop_goes_back_first_and_run_works_it(make_core):
    worked: list[str] = []
    reached = asyncio.Event()

    async def hold_c(title: str) -> None:
        if title == "c" and worked.count("c") == 1:
            reached.set()
            await asyncio.Event().wait()  # until Stop cancels the turn

    core = await make_core(OfflineBackend(recording(worked, hold_c)), queue_fallback=True)
    run = asyncio.ensure_future(core.submit(CHAIN))
    await until(reached.is_set, what="step c under way")
    assert core.interrupt()
    assert (await run).interrupted
    assert states(core) == {"q1": DONE, "q2": DONE, "q3": OPEN, "q4": OPEN}
    assert queued(core) == ["q3", "q4"]
    await core.run_queue()
    assert worked == ["a", "b", "c", "c", "d"]
    assert states(core) == dict.fromkeys(["q1", "q2", "q3", "q4"], DONE)
