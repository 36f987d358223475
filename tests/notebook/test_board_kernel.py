"""`%ollie board` in a real kernel: it shows the store's plans, and follows a step that
another process marks done (the widget's state set on the kernel's thread)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import THIS_TREE
from tests.support.board_kernel import board_html, board_kernel, wait_html
from tests.support.kernel_harness import Kernel

pytestmark = pytest.mark.slow
pytest.importorskip("anywidget")

PLAN = "%%ollie\nShip it\n- Prepare\n- Build (after 1)\n- Release (after 2)"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kernel, Path]]:
    base: Path = tmp_path_factory.mktemp("board")
    with board_kernel(base) as k:
        yield k, base


def first_step(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT id FROM tasks WHERE parent IS NOT NULL AND title = 'Prepare'"
        ).fetchone()
    return str(row[0])


def done_by_another_process(db: Path, step: str) -> None:
    """`ollie-tasks done` in a process of its own, as a person at a shell would."""
    args = [sys.executable, "-m", "ollie_nb.tasks", "--db", str(db), "done", step]
    subprocess.run(args, check=True, capture_output=True, env={**os.environ, **THIS_TREE})


def test_the_board_shows_the_plans_and_follows_another_process(kernel: Any) -> None:
    k, base = kernel
    assert k.run(PLAN, timeout=120).error is None
    shown = k.run("%ollie board")
    assert shown.error is None, shown.error
    assert shown.text() == "ollie: the task store's board (live in the widget)"
    before = board_html(k)
    assert "Ship it" in before and "<svg" in before and "0/3 done" in before
    done_by_another_process(base / "tasks.db", first_step(base / "tasks.db"))
    after = k.run(wait_html("'1/3 done' in html"), timeout=60).text()
    assert "1/3 done" in after and "status&#45;done" in after, after[:200]


def test_unknown_status_is_one_red_line(kernel: Any) -> None:
    k, _ = kernel
    bad = k.run("%ollie board --status sleeping")
    assert bad.error is None and "UsageError: %ollie board: unknown status sleeping" in bad.text()
