"""A parallel run starts a step once the workers of its blockers have ended, not as soon as
the store shows them done: its prompt carries every blocker's report, and the worker it
gets does not depend on which sub-agent finished first (a real ollie-tasks subprocess)."""

from __future__ import annotations

import asyncio

import pytest

from ollie_nb.llm import Message, OfflineBackend, ToolDef, Turn, is_step_prompt
from ollie_nb.llm._offline import demo_reply
from ollie_nb.planning import StepState, read_step
from tests.support.agents import tasks_agent

DIAMOND = (
    "Launch the product\n- Write the brief\n- Write the press release (after 1)\n"
    "- Record the demo video (after 1)\n- Translate the website (after 1)\n"
    "- Launch (after 2, 3, 4)"
)
LATE = "Translate the website"  # marks its step done at once, then replies slowly
SLOW = "Record the demo video"  # ends between the two: after LATE's mark, before its reply


class Steps:
    """The demo planner, with LATE's final reply and SLOW's first request held back."""

    def __init__(self) -> None:
        self.prompts: dict[str, str] = {}  # step title -> its prompt

    async def __call__(self, messages: list[Message], tools: list[ToolDef]) -> Turn:
        first = next((m.content for m in messages if m.role == "user"), "")
        step = read_step(first) if is_step_prompt(first) else None
        title = step.title if step is not None else ""
        if title and messages[-1].role == "user":
            self.prompts[title] = messages[-1].content
            if title == SLOW:
                await asyncio.sleep(0.5)  # a slower model on this step
        elif title == LATE and messages[-1].role == "tool":  # its task_update is in
            await asyncio.sleep(1.5)
        return demo_reply(messages, tools)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_step_starts_after_its_blockers_workers_have_reported(make_core, tmp_path):
    steps = Steps()
    core = await make_core(OfflineBackend(steps), agent=tasks_agent(tmp_path / "tasks.db"))
    await core.submit(DIAMOND)
    record = core.plans[-1]
    run = await core.runs.run_plan(parallel=3)
    assert run.states == dict.fromkeys(record.ids, StepState.DONE), run.summary
    launch = steps.prompts["Launch"]
    for j, title in ((1, "Write the press release"), (2, SLOW), (3, LATE)):
        assert f"- {record.ids[j]} ({title}): Completed step: {title}." in launch, launch
    # all three workers were free when it became ready: the first of them took it
    assert run.workers[record.ids[4]] == "worker1", run.workers
