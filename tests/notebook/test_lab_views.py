"""What a person sees in JupyterLab (Chromium, 1280 px): the views are measured in the page.

These run a real JupyterLab server and a real kernel; they skip without Chromium or
playwright.
"""

from __future__ import annotations

from tests.support.agents import kernel_env
from tests.support.lab import lab_page, run_cell

SEVEN_STEPS = (
    "%%ollie\nShip the quarterly report to the board\n"
    "- Collect the sales data from every region\n- Clean the data and remove duplicates\n"
    "- Draw the revenue and margin charts\n- Write the summary for the executives\n"
    "- Review the numbers with finance\n- Fix what finance finds wrong\n"
    "- Publish the report on the intranet"
)
WIDTHS = """(i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const area = cell.getBoundingClientRect();
  return [...cell.querySelectorAll('.ollie-plan svg')].map(s => {
    const r = s.getBoundingClientRect();
    return {width: r.width, right: r.right, area_right: area.right};
  });
}"""
HAS_SVG = "(i) => !!document.querySelectorAll('.jp-Notebook .jp-Cell')[i].querySelector('.ollie-plan svg')"


def test_the_live_plan_graph_fits_the_cell_like_the_static_one(tmp_path):
    cells = ["%load_ext ollie_nb", SEVEN_STEPS, "%ollie plan", "%ollie plan --watch 1"]
    with lab_page(tmp_path, cells, kernel_env(tmp_path)) as page:
        run_cell(page, 0)
        run_cell(page, 1)
        run_cell(page, 2, wait_for=HAS_SVG)
        run_cell(page, 3, wait_for=HAS_SVG)
        static, live = page.evaluate(WIDTHS, 2), page.evaluate(WIDTHS, 3)
    assert len(static) == 1 and len(live) == 1, (static, live)
    for shown in (static[0], live[0]):
        assert shown["right"] <= shown["area_right"], shown  # nothing cut at the right
    assert abs(live[0]["width"] - static[0]["width"]) < 0.1 * static[0]["width"], (static, live)
