"""The board's Retry button as a person uses it in JupyterLab and in Notebook 7, in Chromium
at 1280 px: a failed step's Retry, clicked, reopens that step and the steps waiting on it in
the store (read back with `ollie-tasks list`, another process), and the board redraws them
open with no Retry left. The screenshots stay in the test's tmp_path (board-retry-before.png,
board-retry-after.png).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.tasks._backends import open_store
from tests.support.agents import THIS_TREE, kernel_env, tasks_agent_file
from tests.support.lab import LAB, NOTEBOOK7, Front, lab_page, run_cell

pytest.importorskip("playwright.sync_api")
pytest.importorskip("anywidget")

UI = 30_000  # milliseconds, for one page element
# Each drawn step's text and drawn state (its node's status-... class).
NODES = """() => Object.fromEntries([...document.querySelectorAll(
    '.jp-Notebook .ollie-board g.node.plan-step')].map((g) => [
  g.textContent, g.getAttribute('class').match(/status-(\\S+)/)[1]]))"""


def seed(db: Path) -> dict[str, str]:
    """A chain plan: First done, Middle failed (by worker-1), Last skipped, Tail waiting."""
    with open_store(db) as store:
        goal = store.create("Chain")
        ids: dict[str, str] = {}
        before: list[str] = []
        for title in ("First", "Middle", "Last", "Tail"):
            ids[title] = before_id = store.create(title, parent=goal, blockers=before)
            before = [before_id]
        store.update(ids["First"], status="done")
        store.update(ids["Middle"], status="failed", assignee="worker-1")
        store.update(ids["Last"], status="cancelled")
    return ids


def stored(db: Path) -> dict[str, tuple[str, str]]:
    """Each task's status and assignee as `ollie-tasks list` prints them (another process)."""
    args = [sys.executable, "-m", "ollie_nb.tasks", "--db", str(db), "list", "--json"]
    out = subprocess.run(
        [*args, "--status", "all"],
        env={**os.environ, **THIS_TREE},
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    return {t["id"]: (t["status"], t["assignee"]) for t in json.loads(out)}


def drawn(nodes: dict[str, str], step: str) -> str:
    """The drawn state of the node whose text names `step`."""
    return next(state for text, state in nodes.items() if step in text)


@pytest.mark.parametrize("front", [LAB, NOTEBOOK7], ids=["lab", "notebook7"])
def test_retry_clicked_reopens_the_failed_step_and_those_after_it(
    tmp_path: Path, front: Front
) -> None:
    db = tmp_path / "tasks.db"
    ids = seed(db)
    middle, last, tail = ids["Middle"], ids["Last"], ids["Tail"]
    cells = ["%load_ext ollie_nb", f"%ollie agent {tasks_agent_file(tmp_path)}", "%ollie board"]
    with lab_page(tmp_path, cells, kernel_env(tmp_path), front) as page:
        for index in range(3):
            run_cell(page, index, timeout=120)
        retry = page.locator(f'.ollie-board button.board-retry[data-step="{middle}"]')
        retry.wait_for(timeout=UI)
        assert page.locator(".ollie-board button.board-retry").count() == 2  # Middle, Last
        assert drawn(page.evaluate(NODES), middle) == "failed"
        retry.scroll_into_view_if_needed()
        box = retry.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280 and box["height"] >= 12
        page.screenshot(path=tmp_path / "board-retry-before.png")
        retry.click()
        page.locator(".ollie-board .board-note").filter(
            has_text=f"reopened {middle}, {last}, {tail}"
        ).wait_for(timeout=UI)
        page.locator(".ollie-board button.board-retry").first.wait_for(state="detached", timeout=UI)
        page.wait_for_function(
            f"() => Object.values(({NODES})()).every((s) => s !== 'failed' && s !== 'cancelled')",
            timeout=UI,
        )
        nodes: Any = page.evaluate(NODES)
        page.screenshot(path=tmp_path / "board-retry-after.png")
    assert [drawn(nodes, s) for s in (ids["First"], middle, last, tail)] == [
        "done",
        "todo",
        "blocked",
        "blocked",
    ], nodes
    rows = stored(db)
    assert [rows[s] for s in (middle, last, tail)] == [("open", "")] * 3
    assert rows[ids["First"]] == ("done", "")
