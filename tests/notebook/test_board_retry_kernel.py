"""The board's Retry button in a real kernel: the front end's message reopens a failed step
and those waiting on it on the store, and the board shows them open again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.tasks import open_store
from tests.core.test_step_retry import rows
from tests.support.board_kernel import VIEW, board_html, board_kernel, wait_html
from tests.support.kernel_harness import Kernel

pytestmark = pytest.mark.slow
pytest.importorskip("anywidget")

CHAIN = "%%ollie\nChain\n- First\n- Middle (after 1)\n- Last (after 2)\n- Tail (after 3)"
IDS = "import ollie_nb\nprint(' '.join(ollie_nb.agent().plans[-1].ids))"
SAID = "'reopened' in html and 'board-retry' not in html"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kernel, Path]]:
    base: Path = tmp_path_factory.mktemp("boardretry")
    with board_kernel(base) as k:
        yield k, base


def test_the_retry_button_reopens_a_failed_step_and_those_after_it(kernel: Any) -> None:
    k, base = kernel
    assert k.run(CHAIN, timeout=120).error is None
    first, middle, last, tail = k.run(IDS).text().split()
    db = base / "tasks.db"
    with open_store(db, create=False) as store:
        store.update(first, status="done")
        store.update(middle, status="failed", assignee="w1")
        store.update(last, status="cancelled")
    assert k.run("%ollie board").error is None
    before = board_html(k)
    assert f'<button class="board-retry" data-step="{middle}">Retry</button>' in before
    assert f'data-step="{last}">Retry' in before and f'data-step="{tail}">Retry' not in before
    data = {"method": "custom", "content": {"kind": "retry", "step": middle}}
    click = {"content": {"data": data}, "buffers": []}  # a comm message, as the front end sends
    after = k.run(VIEW + f"v.widget._handle_msg({click!r})\n" + wait_html(SAID), timeout=60).text()
    assert f"reopened {middle}, {last}, {tail}" in after, after[:300]
    assert "board-retry" not in after  # nothing failed or skipped is left
    db_rows = rows(db)
    assert [db_rows[s] for s in (middle, last, tail)] == [("open", "")] * 3
