"""Building and rendering the plan graph (plan_svg) for 10, 100 and 1000 steps.

The baseline is the `dot` program alone, rendering the very DOT source our graph
produces: what is left over is the cost of our Python code and of piping.
"""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess

from bench._report import Figure
from bench._run import Row, Settings, alternate_sync, median, paired_ratio
from ollie_nb.planning import PlanStep, plan_graph, plan_svg

SIZES = (10, 100, 1000)
SMOKE_SIZES = (3, 10)
GOAL_STEPS = 100
GOAL_SECONDS = 0.5
GOAL_TEXT = "Migrate the reporting pipeline to the new warehouse"
DENSE_STEPS = 41  # each after all earlier ones: 820 `after` links
SMOKE_DENSE_STEPS = 5
DENSE_GOAL_SECONDS = 1.0
_VERBS = ("Check", "Load", "Compare", "Clean", "Draw", "Review", "Publish", "Archive")
_THINGS = ("sales figures", "region table", "chart data", "outliers", "summary", "draft")


def plan_steps(count: int, seed: int = 7) -> list[PlanStep]:
    """A plan-shaped DAG: each step waits for up to two of the ten steps before it."""
    rng = random.Random(seed)
    steps = []
    for i in range(count):
        fan_in = min(i, rng.choice((0, 1, 1, 2)))
        after = tuple(sorted(rng.sample(range(max(0, i - 10), i), fan_in))) if fan_in else ()
        title = f"{rng.choice(_VERBS)} the {rng.choice(_THINGS)} of part {i + 1}"
        body = f"What to do for part {i + 1}.\nDone when the result is checked in."
        steps.append(PlanStep(title, body, after))
    return steps


def dense_steps(count: int = DENSE_STEPS) -> list[PlanStep]:
    """The worst `after` graph: every step waits for all steps before it."""
    return [PlanStep(f"Step {i + 1}", after=tuple(range(i))) for i in range(count)]


def _dense_figure(settings: Settings) -> Figure:
    """A dense plan (drawn as its transitive reduction, a chain) against bare dot on that chain."""
    count = settings.size(DENSE_STEPS, SMOKE_DENSE_STEPS)
    links = count * (count - 1) // 2
    steps = dense_steps(count)
    source = plan_graph(GOAL_TEXT, steps).source.encode("utf-8")
    repeats = settings.repeats(15, 5)
    times = alternate_sync(
        {"ours": lambda: plan_svg(GOAL_TEXT, steps), "dot": lambda: _dot(source)}, repeats
    )
    ours = median(times["ours"])
    return Figure(
        what=f"plan_svg, {count} steps each after all earlier ones ({links} links)",
        unit="ms",
        ours=ours * 1000,
        baseline=median(times["dot"]) * 1000,
        baseline_what="dot -Tsvg alone on the drawn (reduced) DOT source",
        goal=f"< {DENSE_GOAL_SECONDS:g} s",
        met=ours < DENSE_GOAL_SECONDS,
        samples=repeats,
        paired=paired_ratio(times["ours"], times["dot"]),
        note=f"drawn as its transitive reduction, {count - 1} edges"
        + ("" if settings.smoke else "; all 820 links drawn: 57 s here"),
    )


def _dot(source: bytes) -> None:
    subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, check=True)


async def run(settings: Settings) -> list[Figure]:
    """Time plan_svg and bare dot on the same graph for each size."""
    if shutil.which("dot") is None:
        return [
            Figure(
                what="plan graph",
                unit="ms",
                ours=None,
                error="the Graphviz dot program is not installed",
            )
        ]
    warm_up = plan_steps(3)
    _dot(plan_graph(GOAL_TEXT, warm_up).source.encode("utf-8"))
    plan_svg(GOAL_TEXT, warm_up)  # imports graphviz, so no timed run pays for that
    figures = []
    totals: dict[int, float] = {}
    sizes = settings.size(SIZES, SMOKE_SIZES)
    for count in sizes:
        steps = plan_steps(count)
        source = plan_graph(GOAL_TEXT, steps).source.encode("utf-8")
        repeats = settings.repeats(5 if count >= 1000 else 15, 2 if count >= 1000 else 5)
        times = alternate_sync(
            {
                "ours": lambda steps=steps: plan_svg(GOAL_TEXT, steps),
                "build": lambda steps=steps: plan_graph(GOAL_TEXT, steps),
                "dot": lambda source=source: _dot(source),
            },
            repeats,
        )
        totals[count] = median(times["ours"])
        goal = count == GOAL_STEPS
        figures.append(
            Figure(
                what=f"plan_svg, {count} steps (build + render)",
                unit="ms",
                ours=totals[count] * 1000,
                baseline=median(times["dot"]) * 1000,
                baseline_what="dot -Tsvg alone on the same DOT source",
                goal=f"< {GOAL_SECONDS:g} s" if goal else "",
                met=totals[count] < GOAL_SECONDS if goal else None,
                samples=repeats,
                paired=paired_ratio(times["ours"], times["dot"]),
                note=f"graph build {median(times['build']) * 1000:.1f} ms of it",
            )
        )
    figures.append(_dense_figure(settings))
    for small, big in itertools.pairwise(sizes):
        figures.append(
            Figure(
                what=f"plan_svg growth, {small} -> {big} steps",
                unit="x",
                ours=totals[big] / totals[small],
                baseline=big / small,
                baseline_what="linear growth",
            )
        )
    return figures


ROW = Row("graph", "Plan graph", run)
