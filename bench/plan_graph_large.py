"""The readable form of a 5,000-task store's graph: finished chains and fan-outs collapsed.

A plan store holds many plans' steps; drawn in full, dot needs about 39 s for 5,000 nodes.
Ours is plan_svg of 5,000 plan-shaped steps, 70 of each hundred done, drawn collapsed (the
default past COLLAPSE_FROM steps). The baseline is `dot` alone on the very DOT source the
collapsed graph gives: what is left over is our grouping, the graph build and the piping.
"""

from __future__ import annotations

import shutil

from bench._report import Figure
from bench._run import Row, Settings, alternate_sync, median, paired_ratio
from bench.plan_graph import GOAL_TEXT, _dot, plan_steps
from ollie_nb.planning import COLLAPSE_FROM, PlanStep, plan_graph, plan_svg

STEPS = 5000
GOAL_SECONDS = 2.0


def _store(count: int) -> tuple[list[PlanStep], dict[int, str]]:
    """A store's steps and statuses: 70 of each hundred done."""
    return plan_steps(count), {i: "done" for i in range(count) if i % 100 < 70}


async def run(settings: Settings) -> list[Figure]:
    """Time the collapsed drawing and bare dot on its source, side by side."""
    if shutil.which("dot") is None:
        return [Figure(what="large plan graph", unit="s", ours=None, error="dot is not installed")]
    count = settings.size(STEPS, COLLAPSE_FROM + 100)
    steps, statuses = _store(count)
    graph = plan_graph(GOAL_TEXT, steps, statuses=statuses)
    source = graph.source.encode("utf-8")
    boxes = graph.source.count("plan-step")
    repeats = settings.repeats(5, 3)
    times = alternate_sync(
        {
            "ours": lambda: plan_svg(GOAL_TEXT, steps, statuses=statuses),
            "dot": lambda: _dot(source),
        },
        repeats,
    )
    ours = median(times["ours"])
    return [
        Figure(
            what=f"plan_svg of a {count:,}-task store, collapsed to {boxes} boxes",
            unit="s",
            ours=ours,
            baseline=median(times["dot"]),
            baseline_what="dot -Tsvg alone on the collapsed DOT source",
            goal=f"< {GOAL_SECONDS:g} s",
            met=ours < GOAL_SECONDS,
            samples=repeats,
            paired=paired_ratio(times["ours"], times["dot"]),
            note="drawn in full (expand=True): about 39 s, past the 15 s dot timeout",
        )
    ]


ROW = Row("graph-large", "Plan graph of a 5,000-task store", run)
