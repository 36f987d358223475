"""TaskServerPlanBackend reads step statuses: JSON answers first, text lines from servers without them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ollie_nb.planning import StepStatusReader, TaskClient, TaskServerPlanBackend
from ollie_nb.planning._status import listing_statuses, task_status
from ollie_nb.tools import Dispatcher, McpServer
from tests.support.agents import FIXTURES

TASKS = {"t1": "done", "t2": "in_progress", "t3": "open"}


async def _read(tmp_path: Path, mode: str, ids, goal_id: str = "g", reads: int = 1):
    """Run read_statuses `reads` times against status_task_server.py in `mode`."""
    calls = tmp_path / "calls"
    server = McpServer(
        "tasks",
        command=sys.executable,
        args=[str(FIXTURES / "status_task_server.py")],
        env={"TASKS": json.dumps(TASKS), "MODE": mode, "CALLS": str(calls)},
    )
    d = Dispatcher()
    d.add_server("tasks", server)
    backend = TaskServerPlanBackend(TaskClient(d.dispatch, "tasks"))
    assert isinstance(backend, StepStatusReader)
    try:
        results = [await backend.read_statuses(goal_id, ids) for _ in range(reads)]
    finally:
        await d.aclose()
    return results, calls.read_text().splitlines()


@pytest.mark.slow
@pytest.mark.anyio
async def test_json_listing_is_used_when_the_server_gives_it(tmp_path):
    """The text lines of this server say `open` for all: only the JSON answer is right."""
    (statuses,), calls = await _read(tmp_path, "json", ["t1", "t2", "t3"])
    assert statuses == {"t1": "done", "t2": "in_progress", "t3": "open"}
    assert calls == ['task_list {"format": "json", "parent": "g", "status": "all"}']


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_bare_json_list_works_too(tmp_path):
    (statuses,), _ = await _read(tmp_path, "jsonlist", ["t2", "t3"])
    assert statuses == {"t2": "in_progress", "t3": "open"}


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_server_refusing_format_is_read_in_text_and_not_asked_again(tmp_path):
    (first, second), calls = await _read(tmp_path, "strict", ["t1", "t2"], reads=2)
    assert first == second == {"t1": "done", "t2": "in_progress"}
    assert calls == [
        'task_list {"format": "json", "parent": "g", "status": "all"}',
        'task_list {"format": "", "parent": "g", "status": "all"}',
        'task_list {"format": "", "parent": "g", "status": "all"}',
    ]


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_server_ignoring_format_is_parsed_as_text(tmp_path):
    (statuses,), calls = await _read(tmp_path, "text", ["t1", "t3"])
    assert statuses == {"t1": "done", "t3": "open"}
    assert calls == ['task_list {"format": "json", "parent": "g", "status": "all"}']


@pytest.mark.slow
@pytest.mark.anyio
async def test_without_a_listing_each_task_is_read_json_first(tmp_path):
    (statuses,), calls = await _read(tmp_path, "json", ["t1", "t9"], goal_id="")
    assert statuses == {"t1": "done"}  # t9 is unknown: left out
    assert sorted(calls) == [
        'task_read {"format": "", "id": "t9"}',  # the JSON ask failed: tried plain once
        'task_read {"format": "json", "id": "t1"}',
        'task_read {"format": "json", "id": "t9"}',
    ]


@pytest.mark.slow
@pytest.mark.anyio
async def test_task_read_text_fallback_when_listing_fails(tmp_path):
    (statuses,), _ = await _read(tmp_path, "readonly", ["t1", "t2", "t3"])
    assert statuses == {"t1": "done", "t2": "in_progress", "t3": "open"}


@pytest.mark.slow
@pytest.mark.anyio
async def test_real_ollie_tasks_statuses(tmp_path):
    """Real ollie-tasks: a plan persisted, one step updated, statuses read back."""
    command = str(Path(sys.executable).with_name("ollie-tasks"))
    if not os.path.exists(command):
        pytest.fail("ollie-tasks is not installed in this environment")
    server = McpServer("tasks", command=command, args=["--db", str(tmp_path / "t.db")])

    async def run():
        from ollie_nb.planning import PlanStep

        d = Dispatcher()
        d.add_server("tasks", server)
        backend = TaskServerPlanBackend(TaskClient(d.dispatch, "tasks"))
        try:
            plan = await backend.create_plan("g", [PlanStep("a"), PlanStep("b", after=(0,))])
            await d.dispatch("tasks", "task_update", {"id": plan.ids[0], "status": "done"})
            return plan.ids, await backend.read_statuses(plan.goal_id, plan.ids)
        finally:
            await d.aclose()

    ids, statuses = await run()
    assert statuses == {ids[0]: "done", ids[1]: "open"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"tasks": [{"id": "a", "status": "done"}, {"id": "z", "status": "open"}]}',
            {"a": "done"},
        ),
        ('[{"id": "a", "status": "done"}, {"id": "b"}, "junk"]', {"a": "done"}),
        ("a  done  title\nb in_progress t\nnot-wanted open x", {"a": "done", "b": "in_progress"}),
        ("", {}),
    ],
)
def test_listing_statuses(text, expected):
    assert listing_statuses(text, {"a", "b"}) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"id": "a", "status": "done"}', "done"),
        ("id: a\nstatus: in_progress\n", "in_progress"),
        ('{"id": "a"}', None),
        ("nothing here", None),
    ],
)
def test_task_status(text, expected):
    assert task_status(text) == expected
