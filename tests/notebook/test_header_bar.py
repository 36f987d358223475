"""A turn's header: its bar is the worked plan's progress, and an interrupt never fills it; a
worker's interrupted turn shows its own usage, not its previous turn's."""

from __future__ import annotations

import pytest

from ollie_nb.core import (
    PlanMade,
    PlanProgress,
    ToolCalled,
    ToolFinished,
    TurnEnded,
    TurnResult,
    TurnStarted,
    UsageReported,
)
from ollie_nb.notebook._render import Settings, TurnView
from ollie_nb.planning import PlanRecord, PlanStep, StepState
from tests.notebook.test_render import Cell


def view_of(cell: Cell) -> TurnView:
    return TurnView(Settings(usage_footer=False), cell.show, cell.live)


def test_an_interrupted_queue_run_reads_the_plans_steps_done_over_its_bar():
    view = view_of(Cell())
    view(TurnStarted("step 6", True, 5, 7))
    view(PlanProgress(1, 5, 8))
    view(TurnEnded(TurnResult(interrupted=True)))
    view(PlanProgress(1, 5, 8))  # step 6 is open again
    view.finish()
    assert view.bar(finished=True) == (5, 8)
    assert view.header("interrupted", 6.1) == "interrupted (6.1 s) · 5 of 8 steps done"


def test_a_drain_without_a_plan_fills_its_bar_only_when_not_interrupted():
    view = view_of(Cell())
    view(TurnStarted("two", True, 2, 3))
    assert view.bar(finished=False) == (1, 3)
    assert view.bar(finished=True) == (3, 3)
    view(TurnEnded(TurnResult(interrupted=True)))
    assert view.bar(finished=True) == (1, 3)
    assert view.header("interrupted", 2.0) == "interrupted (2.0 s)"


def test_a_workers_interrupted_turn_shows_its_own_usage():
    pytest.importorskip("ipywidgets")
    from ollie_nb.notebook._parallel_widget import ChildPane

    pane = ChildPane(Settings(), "worker1", "step 1: Chore 1")
    pane(TurnStarted("Step 1 of 2 [q1]: Chore 1"))
    usage = UsageReported(300, 40, 300, 40, 1)
    pane(usage)
    pane(TurnEnded(TurnResult("done")))
    assert pane.view.footer_text(usage, 1.0).startswith("this turn: 300 tokens in · 40 out")
    pane(TurnStarted("Step 2 of 2 [q2]: Chore 2"))
    pane(TurnEnded(TurnResult(interrupted=True)))  # stopped before its first answer
    text = pane.view.footer_text(usage, 1.0)
    assert text.startswith("this turn: 0 tokens in · 0 out · 0 requests"), text
    assert pane.state == "interrupted"


def test_the_cells_graph_shows_the_states_the_agent_told_not_a_stale_read():
    steps = (PlanStep("a"), PlanStep("b", after=(0,)), PlanStep("c", after=(1,)))
    ids = ("q1", "q2", "q3")
    record = PlanRecord(1, "Cook", steps, ids, text="Plan: Cook", kind="queue")
    stale = dict(zip(ids, (StepState.DONE, StepState.IN_PROGRESS, StepState.OPEN)))
    cell = Cell()
    view = TurnView(Settings(usage_footer=False), cell.show, cell.live, lambda r: dict(stale))
    view(ToolCalled("c1", "reasoning_plan", "reasoning", {"goal": "Cook"}))
    view(PlanMade(record))
    view(ToolFinished("c1", "reasoning_plan", "reasoning", "Plan: Cook", seconds=0.01))
    told = dict(zip(ids, (StepState.DONE, StepState.OPEN, StepState.OPEN)))
    view(TurnEnded(TurnResult(interrupted=True)))  # Stop during b
    view(PlanProgress(1, 1, 3, told))  # b is open again
    view.finish()
    assert view.plans[0].statuses == told
