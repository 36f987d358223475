"""`%ollie board` as a person sees it in Notebook 7, in Chromium at 1280 px.

The JupyterLab test's store (3 plans, 20 claimed steps) served by `jupyter notebook`: the
anywidget front end loads there too, every step has its box in the graph and every claimed
step its row with its holder, labels at least 10 px tall. The screenshot stays in the
test's tmp_path (board-notebook7.png).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser_board import BOARD, CLAIMED, MIN_LABEL, UI, seed
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.lab import NOTEBOOK7, lab_page, run_cell

pytest.importorskip("playwright.sync_api")
pytest.importorskip("anywidget")
pytest.importorskip("notebook")


def test_the_board_shows_every_step_and_holder_in_notebook7(tmp_path: Path) -> None:
    holders = seed(tmp_path / "tasks.db")
    cells = ["%load_ext ollie_nb", f"%ollie agent {tasks_agent_file(tmp_path)}", "%ollie board"]
    with lab_page(tmp_path, cells, kernel_env(tmp_path), NOTEBOOK7) as page:
        assert page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
        for index in range(3):
            run_cell(page, index, timeout=120)
        page.wait_for_function(f"() => !!({BOARD})()", timeout=UI)
        page.locator(".ollie-board").first.scroll_into_view_if_needed()
        drawn: Any = page.evaluate(BOARD)
        page.screenshot(path=tmp_path / "board-notebook7.png", full_page=True)

    assert [p["boxes"] for p in drawn["plans"]] == [n + 1 for n in CLAIMED], drawn["plans"]
    assert [p["holders"] for p in drawn["plans"]] == holders
    assert min(drawn["heights"]) >= MIN_LABEL, sorted(drawn["heights"])[:5]
