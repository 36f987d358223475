"""Plan review in JupyterLab, in Chromium: a held plan is edited in its editor and approved.

A real JupyterLab and kernel (the offline model, `reviewPlans` on, a real `ollie-tasks` on a
SQLite file); the person types a new title, deletes a step, adds a dependency and clicks
Approve. The editor's graph and `%ollie plan 1` show the edits, and so do the saved tasks.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import kernel_env
from tests.support.lab import lab_page, run_cell

pytest.importorskip("playwright.sync_api")

PLAN = (
    "%%ollie\nShip it\n- Prepare\n- Build (after 1)\n- Docs (after 1)\n- Extra\n"
    "- Release (after 2, 3)"
)
UI = 30_000  # milliseconds, for one page element
EDITOR = ".ollie-plan-editor"
# The SVG of the cell's plan graph: node labels and edge names (dot's `s1->s2`) as text.
GRAPH = """(i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const svg = cell.querySelector('.ollie-plan svg');
  if (!svg) return null;
  const texts = (sel) => [...svg.querySelectorAll(sel)].map((e) => e.textContent.trim());
  return {nodes: texts('g.node text'), edges: texts('g.edge > title')};
}"""


def saved(db: Path) -> dict[str, set[str]]:
    """title -> blocker titles of the plan's saved steps (tasks with a parent)."""
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT id, title FROM tasks WHERE parent IS NOT NULL"))
        deps = conn.execute("SELECT task, blocker FROM deps").fetchall()
    return {
        title: {rows[b] for t, b in deps if t == tid and b in rows} for tid, title in rows.items()
    }


def graph(page: Any, cell: int) -> dict[str, list[str]]:
    page.wait_for_function(f"(i) => !!({GRAPH})(i)", arg=cell, timeout=UI)
    return page.evaluate(GRAPH, cell)


def test_a_held_plan_is_edited_and_approved_in_its_editor(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    server = {"command": sys.executable, "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)]}
    agent = tmp_path / "review.json"
    agent.write_text(json.dumps({"mcpServers": {"tasks": server}, "reviewPlans": True}))
    cells = ["%load_ext ollie_nb", f"%ollie agent {agent}", PLAN, "%ollie plan 1"]
    with lab_page(tmp_path, cells, kernel_env(tmp_path)) as page:
        run_cell(page, 0)
        run_cell(page, 1)
        run_cell(page, 2, timeout=120)
        editor = page.locator(EDITOR)
        rows = editor.locator(".ollie-plan-row")
        rows.nth(4).wait_for(timeout=UI)
        assert rows.count() == 5
        assert not db.exists() or saved(db) == {}  # held: nothing saved yet

        rows.nth(0).locator("input[type=text]").first.fill("Prepare well")
        rows.nth(3).locator("button", has_text="✕").click()  # Extra
        page.wait_for_function(
            "() => document.querySelectorAll('.ollie-plan-editor .ollie-plan-row').length === 4",
            timeout=UI,
        )
        rows.nth(2).locator(".ollie-after input").fill("1, 2")  # Docs waits for Build too
        approve = editor.locator("button", has_text=re.compile(r"^Approve$"))
        page.wait_for_function(  # the graph redrawn after the last edit
            "() => [...document.querySelectorAll('.ollie-plan-editor .ollie-plan g.edge > title')]"
            ".some((t) => t.textContent === 's1->s2')",
            timeout=UI,
        )
        drawn = graph(page, 2)
        page.screenshot(path=tmp_path / "editor.png")  # for a look when this fails
        approve.click()
        editor.locator(".ollie-plan-status", has_text="approved").wait_for(timeout=UI)
        assert editor.locator("input[type=text]").first.is_disabled()
        # the approval's turn runs under the editor: the model is told
        editor.get_by_text("Plan 1 was approved").wait_for(timeout=UI)
        page.screenshot(path=tmp_path / "approved.png")

        run_cell(page, 3, wait_for=f"(i) => !!({GRAPH})(i)")
        after = graph(page, 3)

    for shown in (drawn, after):
        labels = " ".join(shown["nodes"])
        assert "Prepare well" in labels and "Extra" not in labels, shown
        assert "s1->s2" in shown["edges"], shown  # Build -> Docs
    assert saved(db) == {
        "Prepare well": set(),
        "Build": {"Prepare well"},
        "Docs": {"Prepare well", "Build"},
        "Release": {"Build", "Docs"},
    }
