"""Large plan graphs: past COLLAPSE_FROM steps, finished chains and fan-outs are one box each."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ollie_nb.planning._state import StepState
from ollie_nb.planning._types import PlanStep
from ollie_nb.planning.graph import COLLAPSE_FROM, collapsed_view, plan_graph, plan_svg, plan_view
from tests.planning.test_plan_graph import _parse, _steps, _texts, _tooltip

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = '"]; x [label="<script>'
LARGE_LIMIT = 20.0  # s for a 5,000-step store drawn in a fresh process (dot alone took 39 s)

# 1-5 a finished chain, 6-9 a fan-out after 5, 10 after the fan-out.
SHAPE = [
    PlanStep("one"),
    *(PlanStep(f"chain {i + 1}", after=(i - 1,)) for i in range(1, 5)),
    *(PlanStep(f"fan {i}", after=(4,)) for i in range(6, 10)),
    PlanStep("last", after=(5, 6, 7, 8)),
]
SHAPE_STATUSES = {i: "done" for i in range(7)} | {7: "failed", 8: "todo", 9: "todo"}


def _nodes(steps: list[PlanStep], **kwargs: object) -> int:
    return plan_graph("g", steps, **kwargs).source.count("plan-step")  # type: ignore[arg-type]


def test_a_finished_chain_and_a_fan_out_become_one_box_each_with_their_counts() -> None:
    view = collapsed_view(plan_view("g", SHAPE, statuses=SHAPE_STATUSES))
    assert view.heads == ("5 steps (1–5)", "4 steps (6–9)", "10")
    assert [s.title for s in view.steps] == ["5 done", "1 failed · 1 to do · 2 done", "last"]
    assert [s.after for s in view.steps] == [(), (0,), (1,)]
    assert view.statuses == (StepState.DONE, StepState.FAILED, StepState.BLOCKED)


def test_an_open_step_at_the_end_of_a_finished_chain_stays_apart() -> None:
    statuses = {i: "done" for i in range(4)} | {4: "todo"}
    view = collapsed_view(plan_view("g", SHAPE[:5], statuses=statuses))
    assert view.heads == ("4 steps (1–4)", "5")


def test_past_the_threshold_the_graph_collapses_unless_expanded() -> None:
    chain = [PlanStep("first"), *(PlanStep(f"s{i}", after=(i - 1,)) for i in range(1, 600))]
    done = {i: "done" for i in range(600)}
    assert _nodes(chain[:COLLAPSE_FROM], statuses=done) == COLLAPSE_FROM
    assert _nodes(chain, statuses=done) == 1
    assert _nodes(chain, statuses=done, expand=True) == 600


def test_a_hostile_title_stays_literal_in_a_box_and_in_its_tooltip() -> None:
    steps = [PlanStep("root"), *(PlanStep(f"{HOSTILE} {i}", after=(0,)) for i in range(3))]
    steps.append(PlanStep(HOSTILE, after=(1,)))
    view = collapsed_view(plan_view("g", steps))
    svg = plan_svg("g", view.steps, view.ids, dict(enumerate(view.statuses)))
    nodes = _steps(_parse(svg))
    assert "<script" not in svg
    assert _texts(nodes["s2"])[1:] == [HOSTILE]
    assert f"2. {HOSTILE} 0" in (_tooltip(nodes["s1"]) or "")


def _store_of(count: int) -> str:
    """Python that builds a store of `count` tasks: 50 plans, most of their steps finished."""
    return textwrap.dedent(f"""
        from bench.plan_graph import plan_steps
        steps = plan_steps({count})
        statuses = {{i: "done" for i in range({count}) if i % 100 < 70}}
    """)


@pytest.mark.slow
def test_a_5000_step_store_draws_in_a_process_of_its_own_within_a_generous_limit() -> None:
    code = _store_of(5000) + textwrap.dedent("""
        import time
        from ollie_nb.planning import plan_svg
        began = time.perf_counter()
        svg = plan_svg("a store", steps, statuses=statuses)
        print(round(time.perf_counter() - began, 3), svg.count("plan&#45;step"))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seconds, nodes = done.stdout.split()
    assert float(seconds) < LARGE_LIMIT and time.monotonic() - began < 2 * LARGE_LIMIT
    assert 0 < int(nodes) <= 300
