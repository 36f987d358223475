"""Notebook-style fallbacks through the one adapter, and the queue-based fallback."""

from __future__ import annotations

import asyncio
import threading

import pytest

from ollie_nb.planning import (
    QUEUED_MESSAGE,
    Origin,
    PlanResult,
    QueuePlanBackend,
    StepRef,
    dependency_layers,
)
from ollie_nb.planning import PlanStep as S
from ollie_nb.tools import ReasoningServer

PLAN = {
    "goal": "Bake bread",
    "steps": [
        {"title": "Buy flour"},
        {"title": "Buy yeast"},
        {"title": "Mix dough", "body": "500 g flour", "after": [0, 1]},
        {"title": "Bake", "after": [2]},
    ],
}


async def run_plan(backend, plan=PLAN, timeout=5.0):
    server = ReasoningServer(plan_timeout=timeout)
    server.set_plan_backend(backend)
    result = await server.call_tool("reasoning_plan", plan)
    return server, result


@pytest.mark.anyio
async def test_plain_function_fallback():
    seen = []

    def to_dict(goal, steps):
        seen.append((goal, [s.title for s in steps]))
        return [f"row{i}" for i, _ in enumerate(steps)]

    server, result = await run_plan(to_dict)
    assert seen == [("Bake bread", ["Buy flour", "Buy yeast", "Mix dough", "Bake"])]
    assert "[row2] Mix dough" in result.text
    assert result.text.splitlines()[-1] == "Plan saved by to_dict(): 4 steps."
    assert server.plans[-1].persisted


@pytest.mark.anyio
async def test_sync_class_fallback_runs_off_the_event_loop():
    class CsvPlans:
        def __init__(self):
            self.rows = []
            self.thread = None

        def create_plan(self, goal, steps):
            self.thread = threading.current_thread()
            self.rows = [(goal, s.title, ",".join(map(str, s.after))) for s in steps]
            return [f"csv-{i}" for i in range(len(steps))]

    backend = CsvPlans()
    _, result = await run_plan(backend)
    assert backend.rows[2] == ("Bake bread", "Mix dough", "0,1")
    assert backend.thread is not threading.main_thread()
    assert "[csv-3] Bake" in result.text
    assert "Plan saved by CsvPlans" in result.text


@pytest.mark.anyio
async def test_async_class_fallback_with_plan_result():
    class AsyncStore:
        async def create_plan(self, goal, steps):
            await asyncio.sleep(0)
            return PlanResult(ids=[f"a{i}" for i in range(len(steps))], message="Stored async.")

    _, result = await run_plan(AsyncStore())
    assert "[a0] Buy flour" in result.text
    assert result.text.splitlines()[-1] == "Stored async."


@pytest.mark.anyio
async def test_raising_fallback_degrades_with_warning():
    def broken(goal, steps):
        raise ConnectionError("sheet is offline")

    server, result = await run_plan(broken)
    assert not result.is_error
    assert "1. Buy flour" in result.text
    assert result.text.splitlines()[-1] == (
        "warning: broken() failed (sheet is offline); this plan lives in context only."
    )
    assert server.plans[-1].warning and not server.plans[-1].persisted


@pytest.mark.anyio
async def test_too_few_ids_degrades():
    _, result = await run_plan(lambda goal, steps: ["only-one"])
    assert result.text.splitlines()[-1] == (
        "warning: <lambda>() returned 1 ids for 4 steps; this plan lives in context only."
    )
    assert "[only-one]" not in result.text


@pytest.mark.anyio
async def test_no_ids_and_garbage_answers_degrade():
    _, none_result = await run_plan(lambda goal, steps: None)
    assert "returned no ids for 4 steps" in none_result.text
    _, garbage = await run_plan(lambda goal, steps: {"ids": 1})
    assert "returned dict; expected a list of ids or a PlanResult" in garbage.text
    _, blanks = await run_plan(lambda goal, steps: ["", "", "", ""])
    assert "returned no ids for 4 steps" in blanks.text


@pytest.mark.anyio
async def test_hanging_async_fallback_times_out():
    class Hangs:
        async def create_plan(self, goal, steps):
            await asyncio.sleep(3600)

    _, result = await run_plan(Hangs(), timeout=0.2)
    assert "no answer within 0.2 s" in result.text


def test_not_a_backend_is_refused_clearly():
    server = ReasoningServer()
    try:
        server.set_plan_backend(42)
    except TypeError as exc:
        assert "int is not a plan backend" in str(exc)
    else:
        raise AssertionError("42 was accepted as a plan backend")


BREAD_PROMPTS = [
    "Goal: Bake bread\n\nStep 1 of 4 [q1]: Buy flour",
    "Step 2 of 4 [q2]: Buy yeast",
    "Step 3 of 4 [q3]: Mix dough\n500 g flour\n(after: q1, q2)",
    "Step 4 of 4 [q4]: Bake\n(after: q3)",
]


@pytest.mark.anyio
async def test_queue_fallback_prompts_ids_and_message():
    queue = []
    server, result = await run_plan(QueuePlanBackend(queue.append))
    assert result.text == (
        "Plan: Bake bread\n"
        "1. [q1] Buy flour\n"
        "2. [q2] Buy yeast\n"
        "3. [q3] Mix dough\n"
        "   500 g flour\n"
        "   after: step 1 (q1), step 2 (q2)\n"
        "4. [q4] Bake\n"
        "   after: step 3 (q3)\n"
        "\n" + QUEUED_MESSAGE.format(n=4)
    )
    assert [item.text for item in queue] == BREAD_PROMPTS
    assert server.plans[-1].ids == ("q1", "q2", "q3", "q4")
    # each item knows its step: no prompt is read back to learn it
    assert [item.origin for item in queue] == [Origin.PLAN] * 4
    assert [item.step for item in queue] == [
        StepRef(0, i, 4, f"q{i + 1}", "queue", title)
        for i, title in enumerate(["Buy flour", "Buy yeast", "Mix dough", "Bake"])
    ]


@pytest.mark.anyio
async def test_queue_fallback_items_carry_the_number_the_plan_gets():
    queue = []
    await run_plan(QueuePlanBackend(queue.append, lambda: 7))
    assert {item.step.plan for item in queue} == {7}


@pytest.mark.anyio
async def test_queue_fallback_accepts_async_enqueue():
    queue = []

    async def enqueue(prompt):
        queue.append(prompt)

    await run_plan(QueuePlanBackend(enqueue))
    assert [item.text for item in queue] == BREAD_PROMPTS


@pytest.mark.anyio
async def test_queue_order_is_topological():
    """Every blocker is enqueued before its dependents, whatever the shape."""
    plan = {
        "goal": "g",
        "steps": [
            {"title": "a"},
            {"title": "b", "after": [0]},
            {"title": "c"},
            {"title": "d", "after": [2, 1]},
            {"title": "e", "after": [0]},
        ],
    }
    queue = []
    await run_plan(QueuePlanBackend(lambda item: queue.append(item.text)), plan)
    # Step order is a topological order (a step waits only for earlier ones): kept as is.
    assert queue == [
        "Goal: g\n\nStep 1 of 5 [q1]: a",
        "Step 2 of 5 [q2]: b\n(after: q1)",
        "Step 3 of 5 [q3]: c",
        "Step 4 of 5 [q4]: d\n(after: q3, q2)",
        "Step 5 of 5 [q5]: e\n(after: q1)",
    ]
    titles = [p.split("]: ")[1].split("\n")[0] for p in queue]
    for i, step in enumerate(plan["steps"]):
        assert all(titles.index(plan["steps"][j]["title"]) < i for j in step.get("after", []))


def test_dependency_layers():
    steps = [S("a"), S("b"), S("c", after=(0,)), S("d", after=(2, 1)), S("e")]
    assert dependency_layers(steps) == [[0, 1, 4], [2], [3]]
    assert dependency_layers([]) == []
