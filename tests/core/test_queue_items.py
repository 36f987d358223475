"""Queued work is typed: each item knows its origin and the plan step it works.

Two queue plans wait in the queue at once; working them marks each step of the
plan its item names (no guess at "the latest queue plan"), and every turn that
works a step is announced with that step.
"""

from __future__ import annotations

import asyncio

from ollie_nb.core import AgentCore, Phase, TurnStarted
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import parse_plan_prompt
from ollie_nb.planning import Origin, StepRef

FIRST = "Paint the fence\n- Sand it\n- Paint it (after 1)"
SECOND = "Plant the beds\n- Dig\n- Sow (after 1)\n- Water (after 2)"


def test_two_queue_plans_in_the_queue_are_each_marked_by_their_own_items(tmp_path):
    core = AgentCore(OfflineBackend(), queue_fallback=True, workdir=tmp_path, autosave=False)
    events: list = []

    async def scenario():
        async with core:
            for text in (FIRST, SECOND):  # both made before either is worked
                goal, steps = parse_plan_prompt(text)
                args = {"goal": goal, "steps": steps}
                await core.servers.dispatcher.dispatch("reasoning", "reasoning_plan", args)
            items = core.prompts.items
            await core.run_queue(on_event=events.append)
            statuses = [await core.plans.statuses(p) for p in core.plans]
            return items, statuses, core.prompts.texts

    items, statuses, left = asyncio.run(scenario())
    first, second = core.plans
    assert [i.step for i in items] == [
        *(StepRef(1, n, 2, f"q{n + 1}", "queue", s.title) for n, s in enumerate(first.steps)),
        *(StepRef(2, n, 3, f"q{n + 1}", "queue", s.title) for n, s in enumerate(second.steps)),
    ]
    assert {i.origin for i in items} == {Origin.PLAN}
    assert statuses == [dict.fromkeys(first.ids, "done"), dict.fromkeys(second.ids, "done")]
    assert left == []
    started = [e.step for e in events if isinstance(e, TurnStarted)]
    assert started == [i.step for i in items]
    assert started[2].label == "Step 1 of 3 [q1]: Dig"


def test_a_queue_plan_step_interrupted_goes_back_to_open(tmp_path):
    backend = OfflineBackend(chunk_delay=0.05)
    core = AgentCore(backend, queue_fallback=True, workdir=tmp_path, autosave=False)

    async def scenario():
        async with core:
            goal, steps = parse_plan_prompt(FIRST)
            args = {"goal": goal, "steps": steps}
            await core.servers.dispatcher.dispatch("reasoning", "reasoning_plan", args)
            record = core.plans[-1]
            item = core.prompts.pop()
            turn = asyncio.ensure_future(core.submit(item))

            async def streaming():
                while core.turn.phase is not Phase.STREAMING:
                    await asyncio.sleep(0.001)

            await asyncio.wait_for(streaming(), 10)
            during = await core.plans.statuses(record)
            core.interrupt()
            await turn
            return record, during, await core.plans.statuses(record)

    record, during, after = asyncio.run(scenario())
    assert during[record.ids[0]] == "in_progress"
    assert after == dict.fromkeys(record.ids, "open")
