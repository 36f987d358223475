"""`%ollie board` as a person sees it in JupyterLab, in Chromium at 1280 px.

A store of 3 plans with 20 claimed steps (and a few open ones waiting on them): every
step has its box in the graph, every claimed step its row with its holder, and every
label of the graphs is at least 10 px tall. `--side` opens the board in JupyterLab's side
area. The screenshots stay in the test's tmp_path (board.png, board-side.png).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ollie_nb.tasks._backends import open_store
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.lab import lab_page, run_cell

pytest.importorskip("playwright.sync_api")
pytest.importorskip("anywidget")

UI = 30_000  # milliseconds, for one page element
MIN_LABEL = 10.0  # px: the height of the smallest label a person reads without zooming
CLAIMED = (7, 7, 6)  # claimed steps of each plan: 20
# Each plan's step boxes, the table's holders, and every graph label's rendered height.
BOARD = """() => {
  const board = document.querySelector('.jp-Notebook .ollie-board');
  if (!board || !board.querySelector('svg')) return null;
  const plans = [...board.querySelectorAll('.board-plan')].map((p) => ({
    boxes: p.querySelectorAll('g.node.plan-step').length,
    holders: [...p.querySelectorAll('tr.board-held td:nth-child(3)')].map((td) => td.textContent),
  }));
  const heights = [...board.querySelectorAll('svg g.node text')].map(
    (t) => t.getBoundingClientRect().height);
  return {plans, heights};
}"""
# The board outside the notebook, in sight, and its graph labels' smallest height.
SIDE = """() => {
  const board = [...document.querySelectorAll('.ollie-board')].find(
    (b) => !b.closest('.jp-Notebook') && b.getBoundingClientRect().width > 0);
  if (!board || !board.querySelector('svg')) return null;
  const heights = [...board.querySelectorAll('svg g.node text')].map(
    (t) => t.getBoundingClientRect().height);
  return {smallest: Math.min(...heights)};
}"""


def seed(db: Path) -> list[list[str]]:
    """3 plans on the store: each with its claimed steps and one open step after them;
    the holders of each plan's claimed steps."""
    holders = []
    with open_store(db) as store:
        for p, claimed in enumerate(CLAIMED):
            goal = store.create(f"Plan {p + 1}: <b>ship</b> part {p + 1}")
            names = []
            steps = [
                store.create(f"Step {i + 1} of plan {p + 1}", parent=goal) for i in range(claimed)
            ]
            for i, step in enumerate(steps):
                names.append(f"worker-{p + 1}-{i + 1}")
                store.claim(step, names[-1], 600)
            store.create("Check it all", parent=goal, blockers=steps)
            holders.append(names)
    return holders


def test_the_board_shows_every_step_and_holder_readably(tmp_path: Path) -> None:
    holders = seed(tmp_path / "tasks.db")
    cells = ["%load_ext ollie_nb", f"%ollie agent {tasks_agent_file(tmp_path)}", "%ollie board"]
    with lab_page(tmp_path, cells, kernel_env(tmp_path)) as page:
        for index in range(3):
            run_cell(page, index, timeout=120)
        page.wait_for_function(f"() => !!({BOARD})()", timeout=UI)
        page.locator(".ollie-board").first.scroll_into_view_if_needed()
        drawn: Any = page.evaluate(BOARD)
        page.screenshot(path=tmp_path / "board.png", full_page=True)

    assert [p["boxes"] for p in drawn["plans"]] == [n + 1 for n in CLAIMED], drawn["plans"]
    assert [p["holders"] for p in drawn["plans"]] == holders
    assert min(drawn["heights"]) >= MIN_LABEL, sorted(drawn["heights"])[:5]


def test_board_side_opens_in_the_side_area(tmp_path: Path) -> None:
    seed(tmp_path / "tasks.db")
    cells = [
        "%load_ext ollie_nb",
        f"%ollie agent {tasks_agent_file(tmp_path)}",
        "%ollie board --side",
    ]
    with lab_page(tmp_path, cells, kernel_env(tmp_path)) as page:
        for index in range(3):
            run_cell(page, index, timeout=120)
        page.wait_for_function(f"() => !!({SIDE})()", timeout=UI)
        page.screenshot(path=tmp_path / "board-side.png")
        side = page.evaluate(SIDE)
    assert side["smallest"] >= MIN_LABEL, side
