"""After Stop in a background queue run, in Chromium: the header says how far the plan is and
its bar shows it (half of a 4-step chain stopped at step 3), never a full bar; the cell's graph
shows the stopped step open again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agents import kernel_env
from tests.support.lab import lab_page, run_cell

pytest.importorskip("playwright.sync_api")

SLOW_C = (
    "import asyncio, ollie_nb\nfrom ollie_nb.llm import OfflineBackend\n"
    "from ollie_nb.llm._offline import demo_reply, is_step_prompt\n"
    "from ollie_nb.planning import read_step\n"
    "async def slow(messages, tools):\n"
    "    last = messages[-1]\n"
    "    if last.role == 'user' and is_step_prompt(last.content):\n"
    "        if read_step(last.content).title == 'c':\n"
    "            await asyncio.sleep(120)\n"
    "    return demo_reply(messages, tools)\n"
    "ollie_nb.agent().core.set_backend(OfflineBackend(slow))\n"
    "get_ipython().run_line_magic('ollie', 'fallback queue')"
)
RUN = "w = get_ipython().run_cell_magic('ollie', '--bg', 'Cook dinner\\n- a\\n- b\\n- c\\n- d')\nw"
UI = 60_000  # milliseconds, for one page element
CELL = "document.querySelectorAll('.jp-Notebook .jp-Cell')[2]"


@pytest.mark.slow
def test_stop_in_a_background_queue_run_leaves_the_header_at_the_plans_progress(
    tmp_path: Path,
) -> None:
    cells = ["%load_ext ollie_nb", SLOW_C, RUN]
    with lab_page(tmp_path, cells, kernel_env(tmp_path)) as page:
        run_cell(page, 0)
        run_cell(page, 1)
        run_cell(page, 2)
        page.wait_for_function(f"() => {CELL}.innerText.includes('Step 3 of 4')", timeout=UI)
        cell = page.locator(".jp-Notebook .jp-Cell").nth(2)
        cell.locator("button", has_text="Stop").click()
        page.wait_for_function(f"() => {CELL}.innerText.includes('interrupted (')", timeout=UI)
        header = cell.locator(".widget-html-content", has_text="interrupted (").first.inner_text()
        assert header.startswith("ollie interrupted (") and header.endswith(
            " s) · 2 of 4 steps done"
        ), header
        bar = cell.locator(".progress .progress-bar").first
        width = page.evaluate("(e) => e.style.width", bar.element_handle())
        assert width == "50%", width  # 2 of 4, not full
        legend = cell.locator(".ollie-plan svg").first.text_content() or ""
        assert "in progress" not in legend and "done" in legend  # step 3 is open again
        shot = tmp_path / "stopped-header.png"
        cell.screenshot(path=str(shot))
        assert shot.stat().st_size > 1000
