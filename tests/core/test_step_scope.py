"""A step acts on its own task: the trust gate's rule for a step turn's task-server calls,
and the review a raw `task_create` cannot skip (issue 34). In process, no servers."""

from __future__ import annotations

import pytest

from ollie_nb.core._routing import StepScope, TrustGate
from ollie_nb.planning import PlanRecord, PlanStep, step_item
from ollie_nb.planning._steps import Origin

OWN, GOAL, SIBLING, OTHER = "t-own", "t-goal", "t-sib", "t-bob"
SCOPE = StepScope(OWN, GOAL, frozenset({OWN, SIBLING}))


def gate(trusted: tuple[str, ...] | None = None, reviewing: bool = False) -> TrustGate:
    return TrustGate(trusted, None, lambda server: None, "tasks", reviewing=lambda: reviewing)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("task_list", {"status": "all"}),
        ("task_read", {"id": OTHER}),
        ("task_events", {"since": 0}),
        ("task_update", {"id": OWN, "status": "done", "note": "ok"}),
        ("task_heartbeat", {"id": OWN, "assignee": "w"}),
        ("task_edit", {"id": OWN, "body": "more"}),
        ("task_create", {"title": "sub", "parent": GOAL}),
        ("task_create", {"title": "sub", "parent": OWN}),
        ("task_dep", {"id": OWN, "blocker": SIBLING}),
    ],
)
def test_a_step_turn_reads_and_changes_its_own_task_and_goal_unasked(tool, args):
    assert gate().trusts(tool, "tasks", args, SCOPE)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("task_delete", {"id": OTHER, "recursive": True}),
        ("task_delete", {"id": OWN}),
        ("task_update", {"id": SIBLING, "status": "done"}),
        ("task_update", {"id": OTHER, "assignee": "mallory"}),
        ("task_claim", {"id": OTHER, "assignee": "w"}),
        ("task_edit", {"id": OTHER, "title": "mine now"}),
        ("task_edit", {"id": OWN, "parent": OTHER}),
        ("task_create", {"title": "a new goal"}),
        ("task_create", {"title": "in bob's plan", "parent": OTHER}),
        ("task_dep", {"id": OTHER, "blocker": OWN}),
    ],
)
def test_a_step_turn_asks_for_any_other_change_and_every_delete(tool, args):
    assert not gate().trusts(tool, "tasks", args, SCOPE)
    assert gate().trusts(tool, "tasks", args, None)  # a turn that works no step: as before


def test_trusted_tools_naming_the_tool_lets_a_step_turn_call_it():
    args = {"id": OTHER, "recursive": True}
    assert gate(("tasks/task_delete",)).trusts("task_delete", "tasks", args, SCOPE)
    assert not gate(("tasks/task_update",)).trusts("task_delete", "tasks", args, SCOPE)


@pytest.mark.anyio
async def test_a_headless_gate_refuses_a_call_beyond_the_step_and_an_approver_is_asked():
    args = {"id": OTHER, "recursive": True}
    assert not await gate().allows("task_delete", "task_delete", "tasks", args, SCOPE)
    asked: list[str] = []
    asking = TrustGate(None, lambda name, a: asked.append(name) or True, lambda s: None, "tasks")
    assert await asking.allows("task_delete", "task_delete", "tasks", args, SCOPE)
    assert asked == ["task_delete"]


def test_with_review_on_a_raw_task_create_asks_and_other_task_calls_do_not():
    assert not gate(reviewing=True).trusts("task_create", "tasks", {"title": "x"})
    assert gate(reviewing=False).trusts("task_create", "tasks", {"title": "x"})
    assert gate(reviewing=True).trusts("task_update", "tasks", {"id": OWN, "status": "done"})
    assert gate(("task_create",), reviewing=True).trusts("task_create", "tasks", {"title": "x"})


def test_the_scope_of_a_stored_steps_queue_item_names_its_task_goal_and_plan():
    steps = (PlanStep("a", ""), PlanStep("b", "", (0,)))
    record = PlanRecord(1, "Goal", steps, (OWN, SIBLING), GOAL, kind="tasks")
    item = step_item(record, 0, Origin.WATCH)
    assert StepScope.of(item.step) == SCOPE
    queue = PlanRecord(2, "Goal", steps, ("q1", "q2"), kind="queue")
    assert StepScope.of(step_item(queue, 0, Origin.PLAN).step) is None
