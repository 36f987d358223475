"""In a real kernel: a held plan's editor follows decisions made by `%ollie plan ...` and by
code, read from the widget updates the kernel sends (as JupyterLab learns them); and
`%ollie plan N --full` draws every step of a plan that is drawn collapsed by default.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.notebook.test_plan_editor_kernel import Widgets
from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel

pytest.importorskip("ipywidgets")

CHAIN = "%%ollie\nShip it\n- Prepare\n- Build (after 1)\n- Release (after 2)"
BIG = 501  # steps: one past the size drawn collapsed (planning.graph.COLLAPSE_FROM)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base: Path = tmp_path_factory.mktemp("follows")
    k = Kernel(str(base), kernel_env(base))
    try:
        for cell in ["%load_ext ollie_nb", "import ollie_nb"]:
            assert k.run(cell).error is None
        yield k
    finally:
        k.shutdown()


def held_plan(kernel: Kernel) -> tuple[Widgets, int]:
    """A plan held for review with its editor shown; (its widgets, its number)."""
    assert kernel.run("%config OllieMagics.review_plans = True").error is None
    widgets = Widgets()
    run = kernel.run(CHAIN, timeout=120, on_message=widgets)
    assert run.error is None, run.error
    number = int(kernel.run("print(ollie_nb.agent().held_plans()[-1].number)").text())
    return widgets, number


def assert_followed(widgets: Widgets, words: str) -> None:
    (approve,) = widgets.find("ButtonModel", description="Approve")
    assert widgets.models[approve]["disabled"] is True
    headers = [s["value"] for s in widgets.models.values() if "ollie plan" in str(s.get("value"))]
    assert any(words in h and "waiting for your review" not in h for h in headers), headers


def test_an_editor_follows_a_discard_made_with_the_command(kernel: Kernel) -> None:
    widgets, number = held_plan(kernel)
    (approve,) = widgets.find("ButtonModel", description="Approve")
    assert widgets.models[approve]["disabled"] is False
    run = kernel.run(f"%ollie plan discard {number}", on_message=widgets)
    assert run.error is None, run.error
    assert_followed(widgets, "discarded")


def test_an_editor_follows_an_approval_made_from_code(kernel: Kernel) -> None:
    widgets, number = held_plan(kernel)
    run = kernel.run(f"ollie_nb.agent().approve_plan({number})", on_message=widgets)
    assert run.error is None, run.error
    assert_followed(widgets, "approved")


def test_plan_full_draws_every_step_of_a_plan_drawn_collapsed(kernel: Kernel) -> None:
    assert kernel.run("%config OllieMagics.review_plans = False").error is None
    steps = "".join(f"\n- step {i} (after none)" for i in range(1, BIG + 1))  # a fan-out
    made = kernel.run(f"%%ollie\nA big plan{steps}", timeout=180)
    assert made.error is None, made.error
    number = kernel.run("print(len(ollie_nb.agent().plans))").text().strip()
    nodes = r'<g id="node\d+" class="node'
    collapsed = kernel.run(f"%ollie plan {number}", timeout=120).html()
    full = kernel.run(f"%ollie plan {number} --full", timeout=120).html()
    assert "<svg" in collapsed and len(re.findall(nodes, collapsed)) < 10
    assert len(re.findall(nodes, full)) > BIG and f"step {BIG}" in full
    bad = kernel.run(f"%ollie plan {number} --fuller")
    assert "unrecognized arguments: --fuller" in bad.stderr()
