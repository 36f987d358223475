"""A 100-step plan through TaskServerPlanBackend vs raw task_create calls on one session.

Each repeat serves a fresh database and times rounds of four runs on it, in a rotated
order: our wide plan, the concurrent floor, our chain, the sequential floor. The floors call the
SDK `Client` of our McpServer directly, so both sides share the server process.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, alternate, median, paired_ratio
from bench._servers import first_text, task_server_args
from ollie_nb.planning import PlanStep, TaskClient, TaskServerPlanBackend
from ollie_nb.tools import Dispatcher, McpServer

STEPS = 100
SMOKE_STEPS = 5
GOAL_TEXT = "Prepare the quarterly sales report"
WIDE_GOAL = 1.2
CHAIN_GOAL = 1.1


def _steps(chained: bool, count: int) -> list[PlanStep]:
    return [
        PlanStep(
            f"Step {i + 1}: check the figures of region {i + 1}",
            f"Load the region's sales, compare them with last quarter, note outliers ({i + 1}).",
            (i - 1,) if chained and i else (),
        )
        for i in range(count)
    ]


def _goal_args(count: int) -> dict[str, Any]:
    return {"title": GOAL_TEXT, "body": f"Plan of {count} steps."}


async def _repeat(settings: Settings, index: int, rounds: int) -> dict[str, list[float]]:
    count = settings.size(STEPS, SMOKE_STEPS)
    wide, chain = _steps(False, count), _steps(True, count)
    with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
        server = McpServer(
            "tasks", command=sys.executable, args=task_server_args(f"{tmp}/tasks.db")
        )
        await server.connect()
        dispatcher = Dispatcher()
        dispatcher.add_server("tasks", server)
        backend = TaskServerPlanBackend(TaskClient(dispatcher.dispatch, "tasks"))
        client = server._client

        async def create(args: dict[str, Any]) -> str:
            result = await client.call_tool("task_create", args)
            if result.is_error:
                raise RuntimeError(f"task_create failed: {first_text(result)}")
            return first_text(result)

        async def ours(steps: list[PlanStep]) -> None:
            result = await backend.create_plan(GOAL_TEXT, steps)
            if len(result.ids) != count or not all(result.ids):
                raise RuntimeError(f"the plan got {len(result.ids)} ids")

        async def floor_wide() -> None:
            goal = await create(_goal_args(count))
            await asyncio.gather(
                *(create({"title": s.title, "body": s.body, "parent": goal}) for s in wide)
            )

        async def floor_chain() -> None:
            goal = await create(_goal_args(count))
            previous = ""
            for step in chain:
                args: dict[str, Any] = {"title": step.title, "body": step.body, "parent": goal}
                if previous:
                    args["blockers"] = [previous]
                previous = await create(args)

        try:
            await client.call_tool("task_list", {"status": "all"})
            for _ in range(3):
                await create({"title": "warm-up"})
            return await alternate(
                {
                    "ours_wide": lambda: ours(wide),
                    "floor_wide": floor_wide,
                    "ours_chain": lambda: ours(chain),
                    "floor_chain": floor_chain,
                },
                rounds,
                start=index * rounds,
            )
        finally:
            await dispatcher.aclose()


async def run(settings: Settings) -> list[Figure]:
    """Time both plan shapes against their floors, a fresh database per repeat."""
    repeats, rounds = settings.repeats(16, 2), settings.repeats(3, 1)
    times: dict[str, list[float]] = {}
    for index in range(repeats):
        for name, seconds in (await _repeat(settings, index, rounds)).items():
            times.setdefault(name, []).extend(seconds)
    steps = settings.size(STEPS, SMOKE_STEPS)
    figures = []
    for shape, floor, goal in (
        ("wide", f"goal + {steps} concurrent task_create (gather), same session", WIDE_GOAL),
        ("chain", f"{steps + 1} sequential task_create, same session", CHAIN_GOAL),
    ):
        o, b = median(times[f"ours_{shape}"]), median(times[f"floor_{shape}"])
        figures.append(
            Figure(
                what=f"{steps}-step {shape} plan: TaskServerPlanBackend",
                unit="ms",
                ours=o * 1000,
                baseline=b * 1000,
                baseline_what=floor,
                max_ratio=goal,
                samples=repeats * rounds,
                paired=paired_ratio(times[f"ours_{shape}"], times[f"floor_{shape}"]),
            )
        )
    return figures


ROW = Row("plan", "Plan persistence", run)
