"""The status read of a large plan on real ollie-tasks takes a few calls at any size."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.planning import TaskClient, TaskServerPlanBackend
from ollie_nb.tasks import SqliteTaskStore
from ollie_nb.tools import Dispatcher, McpServer, ToolResult

ROOT = Path(__file__).resolve().parents[2]


class Counting(Dispatcher):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def dispatch(self, server: str, tool: str, args: dict[str, Any]) -> ToolResult:
        self.calls.append((tool, args))
        return await super().dispatch(server, tool, args)


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_statuses_of_a_3000_step_plan_take_a_few_paged_calls(tmp_path):
    db = tmp_path / "tasks.db"
    with SqliteTaskStore(db, create=True) as store:
        goal = store.create("A big goal")
        steps = [store.create(f"Step {i + 1} of the big goal", parent=goal) for i in range(3000)]
        for step in steps[::7]:
            store.update(step, status="done")
    server = McpServer(
        "tasks",
        command=sys.executable,
        args=["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
        env={"PYTHONPATH": str(ROOT)},  # this tree's ollie-tasks
    )

    async def run():
        d = Counting()
        d.add_server("tasks", server)
        try:
            backend = TaskServerPlanBackend(TaskClient(d.dispatch, "tasks"))
            return await backend.read_statuses(goal, steps), d.calls
        finally:
            await d.aclose()

    statuses, calls = await run()
    assert statuses == {s: "done" if i % 7 == 0 else "open" for i, s in enumerate(steps)}
    assert [tool for tool, _ in calls] == ["task_list"] * len(calls) and 2 <= len(calls) <= 3
    assert all(args["fields"] == ["id", "status"] for _, args in calls)
