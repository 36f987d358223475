"""The plan editor's graph can be read at a laptop's width, in JupyterLab, in Chromium.

A 1280 px wide page with the file browser open; a held 5-step chain with long titles. Every
label of the rendered graph is at least 10 px tall, every title is in the graph whole
(wrapped, not cut), and every row shows its whole title. After Approve, the approval's turn
shows under the reply and the editor, and no text written for the model is in sight. The
screenshots stay in the test's tmp_path (editor-graph.png, approved.png) for a look.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import kernel_env
from tests.support.lab import lab_page, run_cell

pytest.importorskip("playwright.sync_api")

TITLES = [
    "Export the posts and every image of the old blog",
    "Set up the new server with the same PHP version",
    "Import the posts into the new database",
    "Revise: keep a backup of the database first",
    "Point the domain at the new host and check it",
]
CHAIN = "%%ollie\nMove the blog to a new host\n" + "\n".join(
    f"- {t}" + (f" (after {i})" if i else "") for i, t in enumerate(TITLES)
)
UI = 30_000  # milliseconds, for one page element
MIN_LABEL = 10.0  # px: the height of the smallest label a person reads without zooming
# Each step node's text lines and each text element's rendered height, in the editor's graph.
LABELS = """() => {
  const svg = document.querySelector('.ollie-plan-editor .ollie-plan svg');
  if (!svg) return null;
  const nodes = [...svg.querySelectorAll('g.node.plan-step')].map(
    (g) => [...g.querySelectorAll('text')].map((t) => t.textContent.trim()));
  const heights = [...svg.querySelectorAll('g.node text')].map(
    (t) => t.getBoundingClientRect().height);
  const width = svg.getBoundingClientRect().width;
  return {nodes, heights, width};
}"""
# Whether each row's title box shows its whole value (nothing scrolled out of sight).
ROWS = """() => [...document.querySelectorAll('.ollie-plan-editor .ollie-plan-row input')]
  .filter((i) => i.placeholder === 'title')
  .map((i) => ({value: i.value, whole: i.scrollWidth <= i.clientWidth + 1}))"""

# Where the reply, the editor and the approval's turn are in the cell, top to bottom.
ORDER = """() => {
  const cell = document.querySelector('.ollie-plan-editor').closest('.jp-Cell');
  const top = (el) => (el ? el.getBoundingClientRect().top : null);
  const reply = [...cell.querySelectorAll('.jp-OutputArea-output p')]
    .find((p) => p.textContent.includes('waiting for your review'));
  const told = [...cell.querySelectorAll('.ollie-plan-editor p')]
    .find((p) => p.textContent.includes('Plan 1 was approved'));
  return {reply: top(reply), editor: top(cell.querySelector('.ollie-plan-editor')), told: top(told)};
}"""
# The text a person sees in the cell's outputs (a tool call's closed details left out).
VISIBLE = """() => document.querySelector('.ollie-plan-editor').closest('.jp-Cell')
  .querySelector('.jp-Cell-outputArea').innerText"""


def open_file_browser(page: Any) -> None:
    """The left sidebar with the file browser, as JupyterLab opens it for a new user."""
    browser = page.locator(".jp-FileBrowser")
    if not browser.is_visible():
        page.locator('.jp-SideBar [data-id="filebrowser"]').click()
    browser.wait_for(state="visible", timeout=UI)


def test_a_long_chain_in_the_editor_has_readable_labels_and_whole_titles(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "review.json"
    agent.write_text(json.dumps({"reviewPlans": True}))
    cells = ["%load_ext ollie_nb", f"%ollie agent {agent}", CHAIN]
    with lab_page(tmp_path, cells, kernel_env(tmp_path)) as page:
        open_file_browser(page)
        run_cell(page, 0)
        run_cell(page, 1)
        run_cell(page, 2, timeout=120)
        page.wait_for_function(f"() => !!({LABELS})()", timeout=UI)
        page.locator(".ollie-plan-editor").scroll_into_view_if_needed()
        drawn = page.evaluate(LABELS)
        rows = page.evaluate(ROWS)
        page.screenshot(path=tmp_path / "editor-graph.png", full_page=True)
        page.locator(".ollie-plan-editor button", has_text=re.compile(r"^Approve$")).click()
        told = page.get_by_text("Plan 1 was approved")
        told.wait_for(timeout=UI)
        told.scroll_into_view_if_needed()
        page.screenshot(path=tmp_path / "approved.png")
        order = page.evaluate(ORDER)
        visible = page.evaluate(VISIBLE)

    assert None not in order.values() and order["reply"] < order["editor"] < order["told"], order
    assert "waiting for your review: approve, edit or send it back below" in visible
    assert "Stop here" not in visible and "awaits the user's review" not in visible

    shown = [" ".join(lines[1:]) for lines in drawn["nodes"]]  # below each node's number
    assert shown == TITLES, shown
    assert min(drawn["heights"]) >= MIN_LABEL, drawn["heights"]
    assert [r["value"] for r in rows] == TITLES
    assert all(r["whole"] for r in rows), rows
