"""Each step's tokens and cost on the plan graph: a label line and the tooltip, drawn through
the same escaping as the titles, so a model-chosen title cannot break out of either."""

from __future__ import annotations

import re

import pytest

from ollie_nb.planning import PlanStep, Spend, plan_graph, plan_svg
from tests.planning.test_plan_graph import SVG, _groups, _parse, _steps, _texts, _tooltip

pytest.importorskip("graphviz")
INJECTION = '"]; x [label="<script>alert(1)</script>'
STEPS = [PlanStep(INJECTION, f"do {INJECTION}"), PlanStep("plain", after=(0,)), PlanStep("none")]
SPEND = {0: Spend(12345, 0.0123), "3": Spend(40, 0.0, 2)}  # by index or by step id


def test_each_worked_step_shows_its_tokens_and_cost_and_a_title_injects_nothing():
    root = _parse(plan_svg("goal", STEPS, ["1", "2", "3"], spend=SPEND))
    nodes = set(_groups(root, "node")) - {"legend"}
    assert nodes == {"goal", "s0", "s1", "s2"}  # no node `x`: the title stayed in its label
    assert not list(root.iter(f"{SVG}script"))
    steps = _steps(root)
    first = _texts(steps["s0"])
    assert first[-1] == "12,345 tokens · $0.0123"
    assert "".join(first[1:-1]).replace(" ", "") == INJECTION.replace(" ", "")
    assert _tooltip(steps["s0"]) == f"do {INJECTION}\n\nused 12,345 tokens, $0.0123"
    assert _texts(steps["s1"]) == ["2", "plain"]  # not worked: no spend line
    assert _texts(steps["s2"])[-1] == "40 tokens · no price known"


def test_the_dot_source_keeps_the_title_quoted():
    source = plan_graph("goal", STEPS, spend=SPEND).source
    nodes = re.findall(r"^\s*(\w+) \[", source, re.MULTILINE)
    assert "x" not in nodes and nodes.count("s0") == 1
    assert '\\"]; x [label=\\"' in source  # the quotes escaped inside the label string
