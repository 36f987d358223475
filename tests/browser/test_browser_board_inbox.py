"""The board's inbox as a person uses it in JupyterLab and in Notebook 7, in Chromium at
1280 px: a request a worker asked is a row above the plans, in sight, its Allow button
clickable; the click answers that request in the store (recorded with who answered) and the
row leaves. The screenshot stays in the test's tmp_path (board-inbox.png).
"""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from ollie_nb.tasks._backends import open_store
from ollie_nb.tasks._inbox import Inbox
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.lab import LAB, NOTEBOOK7, Front, lab_page, run_cell

pytest.importorskip("playwright.sync_api")
pytest.importorskip("anywidget")

UI = 30_000  # milliseconds, for one page element
ASKER = "worker-<b>7</b>"


def seed(db: Path) -> tuple[str, str]:
    """A plan of two steps, a worker's approval and another's cap asked on its first step."""
    with open_store(db) as store:
        goal = store.create("Ship it")
        step = store.create("deploy", parent=goal)
        store.create("check", parent=goal, blockers=[step])
        inbox = Inbox(store)
        approval = inbox.ask(
            "approval", "write notes.txt", ASKER, goal=goal, step=step, timeout=600
        )
        cap = inbox.ask("cap", "plan reached its $0.50 cap", "worker-8", goal=goal, timeout=600)
    return approval, cap


@pytest.mark.parametrize("front", [LAB, NOTEBOOK7], ids=["lab", "notebook7"])
def test_an_inbox_row_is_clickable_and_its_answer_reaches_the_store(
    tmp_path: Path, front: Front
) -> None:
    db = tmp_path / "tasks.db"
    approval, cap = seed(db)
    cells = ["%load_ext ollie_nb", f"%ollie agent {tasks_agent_file(tmp_path)}", "%ollie board"]
    with lab_page(tmp_path, cells, kernel_env(tmp_path), front) as page:
        for index in range(3):
            run_cell(page, index, timeout=120)
        row = page.locator(f'.ollie-board tr.board-ask[data-request="{approval}"]')
        row.wait_for(timeout=UI)
        assert row.locator("td").nth(2).inner_text() == ASKER  # escaped: shown as text
        allow = row.locator('button[data-answer="allow"]')
        allow.scroll_into_view_if_needed()
        box = allow.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280 and box["height"] >= 12
        page.screenshot(path=tmp_path / "board-inbox.png", full_page=True)
        allow.click()
        row.wait_for(state="detached", timeout=UI)
        page.locator(".ollie-board .board-note").filter(has_text=f"answered {approval}").wait_for(
            timeout=UI
        )
        assert page.locator(f'.ollie-board tr.board-ask[data-request="{cap}"]').count() == 1
    with open_store(db) as store:
        rows = {r.id: r for r in Inbox(store).list("all")[0]}
    assert (rows[approval].answer, rows[approval].answered_by) == ("allow", getpass.getuser())
    assert rows[cap].state == "open"
