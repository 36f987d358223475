"""Reading the step statuses of a 1,000-step plan from ollie-tasks.

The plan (a goal with 1,000 steps) is written straight into a SQLite file; then
TaskServerPlanBackend.read_statuses asks the task server over stdio, through a
dispatcher that counts the calls. Goal: at most 3 calls and under 50 ms. Baseline:
what a reader did when the listing outgrew the result cap, one task_read per step.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, median
from bench._servers import task_server_args
from ollie_nb.planning import TaskClient, TaskServerPlanBackend
from ollie_nb.tasks import SqliteTaskStore
from ollie_nb.tools import Dispatcher, McpServer, ToolResult

STEPS = 1000
SMOKE_STEPS = 20
GOAL_MS = 50.0
GOAL_CALLS = 3
ROOT = Path(__file__).resolve().parents[1]


class _Counting(Dispatcher):
    """A dispatcher that counts the calls it routes."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def dispatch(self, server: str, tool: str, args: dict[str, Any]) -> ToolResult:
        self.calls += 1
        return await super().dispatch(server, tool, args)


def _plan(db: Path, count: int) -> tuple[str, list[str]]:
    with SqliteTaskStore(db, create=True) as store:
        goal = store.create("Check every region's figures", f"A plan of {count:,} steps.")
        steps = [
            store.create(f"Step {i + 1}: check the figures of region {i + 1}", parent=goal)
            for i in range(count)
        ]
        for step in steps[::3]:
            store.update(step, status="done")
    return goal, steps


async def _measure(db: Path, count: int, repeats: int, per_step_repeats: int) -> dict[str, Any]:
    goal, steps = _plan(db, count)
    # This tree's ollie_nb for the server too (MCP servers start with a minimal environment).
    server = McpServer(
        "tasks",
        command=sys.executable,
        args=task_server_args(db),
        env={"PYTHONPATH": str(ROOT)},
    )
    dispatcher = _Counting()
    dispatcher.add_server("tasks", server)
    backend = TaskServerPlanBackend(TaskClient(dispatcher.dispatch, "tasks"))
    try:
        await server.connect()
        await backend.read_statuses(goal, steps)  # warm-up
        ours: list[float] = []
        calls: list[int] = []
        for _ in range(repeats):
            dispatcher.calls = 0
            began = time.perf_counter()
            found = await backend.read_statuses(goal, steps)
            ours.append(time.perf_counter() - began)
            calls.append(dispatcher.calls)
            if len(found) != count:
                raise RuntimeError(f"read {len(found)} statuses of {count}")
        per_step: list[float] = []
        for _ in range(per_step_repeats):
            began = time.perf_counter()
            await asyncio.gather(
                *(dispatcher.dispatch("tasks", "task_read", {"id": s}) for s in steps)
            )
            per_step.append(time.perf_counter() - began)
        return {"ours": ours, "calls": calls, "per_step": per_step}
    finally:
        await dispatcher.aclose()


async def run(settings: Settings) -> list[Figure]:
    """Time the status read of a 1,000-step plan, and count its calls."""
    count = settings.size(STEPS, SMOKE_STEPS)
    with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
        got = await _measure(
            Path(tmp) / "tasks.db", count, settings.repeats(30, 5), settings.repeats(3, 1)
        )
    ms = median(got["ours"]) * 1000
    calls = max(got["calls"])
    print(f"status read of a {count}-step plan: {calls} calls, median {ms:.1f} ms")
    return [
        Figure(
            what=f"status read of a {count}-step plan ({calls} calls)",
            unit="ms",
            ours=ms,
            baseline=median(got["per_step"]) * 1000,
            baseline_what=f"{count} task_read calls (the reader past the result cap)",
            goal=f"< {GOAL_MS:g} ms, <= {GOAL_CALLS} calls",
            met=ms < GOAL_MS and calls <= GOAL_CALLS,
            samples=len(got["ours"]),
        )
    ]


ROW = Row("status", "Status read of a large plan", run)
