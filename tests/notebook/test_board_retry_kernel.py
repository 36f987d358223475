"""The board's Retry button in a real kernel: the front end's message reopens a failed step
and those waiting on it on the store, and the board shows them open again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ollie_nb.tasks import open_store
from tests.core.test_step_retry import rows
from tests.notebook.test_board_kernel import VIEW
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel

pytestmark = pytest.mark.slow
pytest.importorskip("anywidget")

CHAIN = "%%ollie\nChain\n- First\n- Middle (after 1)\n- Last (after 2)\n- Tail (after 3)"
IDS = "import ollie_nb\nprint(' '.join(ollie_nb.agent().plans[-1].ids))"
WAIT_SAID = (
    "import asyncio\n"
    "for _ in range(400):\n"
    "    if 'reopened' in v.widget.html and 'board-retry' not in v.widget.html:\n"
    "        break\n"
    "    await asyncio.sleep(0.05)\n"
    "print(v.widget.html)"
)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base: Path = tmp_path_factory.mktemp("boardretry")
    k = Kernel(str(base), kernel_env(base))
    try:
        assert k.run("%load_ext ollie_nb").error is None
        yield k, base
    finally:
        k.shutdown()


def test_the_retry_button_reopens_a_failed_step_and_those_after_it(kernel: Any) -> None:
    k, base = kernel
    assert k.run(f"%ollie agent {tasks_agent_file(base)}").error is None
    assert k.run(CHAIN, timeout=120).error is None
    first, middle, last, tail = k.run(IDS).text().split()
    db = base / "tasks.db"
    with open_store(db, create=False) as store:
        store.update(first, status="done")
        store.update(middle, status="failed", assignee="w1")
        store.update(last, status="cancelled")
    assert k.run("%ollie board").error is None
    before = k.run(VIEW + "print(v.widget.html)").text()
    assert f'<button class="board-retry" data-step="{middle}">Retry</button>' in before
    assert f'data-step="{last}">Retry' in before and f'data-step="{tail}">Retry' not in before
    data = {"method": "custom", "content": {"kind": "retry", "step": middle}}
    click = {"content": {"data": data}, "buffers": []}  # a comm message, as the front end sends
    after = k.run(VIEW + f"v.widget._handle_msg({click!r})\n" + WAIT_SAID, timeout=60).text()
    assert f"reopened {middle}, {last}, {tail}" in after, after[:300]
    assert "board-retry" not in after  # nothing failed or skipped is left
    db_rows = rows(db)
    assert [db_rows[s] for s in (middle, last, tail)] == [("open", "")] * 3
