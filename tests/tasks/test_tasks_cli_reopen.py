"""`ollie-tasks reopen ID...` opens failed, cancelled or handed-back tasks again from the
shell, unassigned, with the store call `task_reopen` makes, on a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ollie_nb.tasks import TaskStore
from ollie_nb.tasks.cli import main


def _rows(db: Path) -> dict[str, tuple[str, str]]:
    """Each task's status and assignee, read straight from SQLite."""
    with sqlite3.connect(db) as conn:
        return {t: (s, a) for t, s, a in conn.execute("SELECT id, status, assignee FROM tasks")}


def _stuck(db: Path) -> tuple[str, str, str]:
    """A failed task, a cancelled one and a done one, each with an assignee."""
    with TaskStore(db, create=True) as store:
        ids = tuple(store.create(title) for title in ("Build", "Lint", "Ship"))
        for task_id, status in zip(ids, ("failed", "cancelled", "done")):
            store.update(task_id, status=status, assignee="w1")
    return ids


def test_reopen_opens_each_task_unassigned_and_notes_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "tasks.db"
    failed, cancelled, _ = _stuck(db)
    assert main(["--db", str(db), "reopen", failed, cancelled, "--note", "flaky net"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"ok: {failed} reopened (was failed)",
        f"ok: {cancelled} reopened (was cancelled)",
    ]
    assert [_rows(db)[t] for t in (failed, cancelled)] == [("open", "")] * 2
    with TaskStore(db, create=False) as store:
        assert [n.text for n in store.get(failed).notes] == ["flaky net"]
        reopened = [e.task for e in store.events(0, 1000) if "reopened" in e.payload]
    assert reopened == [failed, cancelled]


def test_reopen_stops_at_a_refusal_after_printing_what_it_reopened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "tasks.db"
    failed, cancelled, done = _stuck(db)
    assert main(["--db", str(db), "reopen", failed, done, cancelled, "--json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == [{"id": failed, "was": "failed"}]
    assert err.startswith("ollie-tasks: error: ") and f"task {done} is done" in err
    after = _rows(db)
    assert (after[failed], after[done], after[cancelled]) == (
        ("open", ""),
        ("done", "w1"),
        ("cancelled", "w1"),
    )
