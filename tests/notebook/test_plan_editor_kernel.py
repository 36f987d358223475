"""The plan editor in a real kernel, driven through the comm channel as JupyterLab drives it.

A foreground `%%ollie` cell makes a plan with review on (a real `ollie-tasks` on a real
SQLite file, the offline model); the cell ends with the editor under the call. The test
then sends the widgets' own comm messages (a value update, button clicks) after the cell
finished, as a person's edits arrive, and reads the saved tasks from the database.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.waits import output_until

pytest.importorskip("ipywidgets")

PLAN = "%%ollie\nShip it\n- Prepare\n- Left (after 1)\n- Right (after 1)\n- Join (after 2, 3)"
WAIT = 60.0  # seconds, for the approval to reach the task server on a busy machine


class Widgets:
    """The widget models a cell opened (comm id -> state, updates applied), as the front end
    learns them."""

    def __init__(self) -> None:
        self.models: dict[str, dict[str, Any]] = {}

    def __call__(self, kind: str, content: dict[str, Any]) -> None:
        if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
            self.models[content["comm_id"]] = dict(content["data"]["state"])
        elif kind == "comm_msg" and content["data"].get("method") == "update":
            self.models.get(content["comm_id"], {}).update(content["data"]["state"])

    def find(self, model: str, **state: Any) -> list[str]:
        return [
            cid
            for cid, s in self.models.items()
            if s.get("_model_name") == model and all(s.get(k) == v for k, v in state.items())
        ]


def send(kernel: Kernel, comm_id: str, data: dict[str, Any]) -> None:
    """One comm message to the kernel, as JupyterLab sends it for a widget."""
    msg = kernel.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    kernel.kc.shell_channel.send(msg)


def set_value(kernel: Kernel, comm_id: str, value: str) -> None:
    send(kernel, comm_id, {"method": "update", "state": {"value": value}, "buffer_paths": []})


def click(kernel: Kernel, comm_id: str) -> None:
    send(kernel, comm_id, {"method": "custom", "content": {"event": "click"}})


def saved_tasks(db: Path) -> dict[str, tuple[str, set[str]]]:
    """id -> (title, blocker titles) of every task with a parent (the plan's steps)."""
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, title FROM tasks WHERE parent IS NOT NULL").fetchall()
        deps = conn.execute("SELECT task, blocker FROM deps").fetchall()
    titles = dict(rows)
    return {
        tid: (title, {titles[b] for t, b in deps if t == tid and b in titles})
        for tid, title in rows
    }


@pytest.fixture
def kernel(tmp_path: Path) -> Any:
    env = kernel_env(tmp_path)
    env["HOME"] = str(tmp_path / "home")
    k = Kernel(str(tmp_path), env)
    server = {"command": sys.executable, "args": ["-m", "ollie_nb.tasks", "serve", "--db"]}
    server["args"].append(str(tmp_path / "tasks.db"))
    agent = tmp_path / "review.json"
    agent.write_text(json.dumps({"mcpServers": {"tasks": server}, "reviewPlans": True}))
    try:
        for cell in ["%load_ext ollie_nb", "import ollie_nb", f"%ollie agent {agent}"]:
            run = k.run(cell)
            assert run.error is None, run.error
        yield k
    finally:
        k.shutdown()


def wait_for_status(kernel: Kernel, words: str) -> str:
    """The editor's status line once it says `words`, read from the kernel's widget updates
    while no cell runs (the answer must not wait for the next cell to wake the kernel)."""
    deadline = time.monotonic() + WAIT
    seen: list[str] = []
    while time.monotonic() < deadline:
        try:
            msg = kernel.kc.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
        value = data.get("state", {}).get("value") if data.get("method") == "update" else None
        if isinstance(value, str) and "<span" in value:
            seen.append(value)
            if words in value:
                return value
    raise AssertionError(f"no status with {words!r} in {WAIT} s; seen {seen}")


def test_edits_and_approve_sent_as_comm_messages_save_the_edited_plan(
    kernel: Kernel, tmp_path: Path
) -> None:
    widgets = Widgets()
    run = kernel.run(PLAN, timeout=120, on_message=widgets)
    assert run.error is None, run.error
    assert "%ollie plan approve 1" in run.text()  # the text form, for terminals
    editors = [o for o in run.outputs if "application/vnd.jupyter.widget-view+json" in o["data"]]
    assert editors, run.text()
    assert saved_tasks(tmp_path / "tasks.db") == {}  # held: nothing saved yet

    (title,) = widgets.find("TextModel", value="Prepare")
    set_value(kernel, title, "Prepare well")
    deletes = widgets.find("ButtonModel", description="✕")
    join_after = widgets.find("TextModel", value="2, 3")
    assert len(deletes) == 4 and len(join_after) == 1
    click(kernel, deletes[2])  # Right: Join then waits for Left and Prepare
    (approve,) = widgets.find("ButtonModel", description="Approve")
    click(kernel, approve)
    assert "approved: 3 steps saved" in wait_for_status(kernel, "approved")

    # the approval's prompt runs as a background turn under the editor: the model hears of it
    last = "[m.content for m in ollie_nb.agent().history if m.role == 'assistant'][-1:]"
    output_until(kernel, f"print({last})", "Plan 1 was approved", WAIT)

    tasks = saved_tasks(tmp_path / "tasks.db")
    assert sorted(t for t, _ in tasks.values()) == ["Join", "Left", "Prepare well"]
    blockers = {t: b for t, b in tasks.values()}
    assert blockers["Join"] == {"Left", "Prepare well"} and blockers["Left"] == {"Prepare well"}


def test_edits_in_the_editor_are_kept_for_the_approve_command(
    kernel: Kernel, tmp_path: Path
) -> None:
    widgets = Widgets()
    run = kernel.run(PLAN, timeout=120, on_message=widgets)
    assert run.error is None, run.error
    (title,) = widgets.find("TextModel", value="Left")
    set_value(kernel, title, "Left, edited")
    kept = "print(ollie_nb.agent().plan_draft(1).rows[1].title)"
    output_until(kernel, kept, lambda shown: shown.strip() == "Left, edited", WAIT)
    run = kernel.run("%ollie plan approve 1 --no-run", timeout=120)
    assert run.error is None, run.error
    titles = sorted(t for t, _ in saved_tasks(tmp_path / "tasks.db").values())
    assert titles == ["Join", "Left, edited", "Prepare", "Right"]


FALLBACK = """
import threading
made_on = []

def sheet(goal, steps):
    made_on.append(threading.current_thread().name)
    return [f"row{i + 1}" for i in range(len(steps))]

ollie_nb.set_fallback(sheet)
get_ipython().run_line_magic("config", "OllieMagics.review_plans = True")
"""


def widgets_opened(kernel: Kernel, until: Any, seconds: float = WAIT) -> Widgets:
    """The widget models the kernel opens while no cell runs (a background turn's), read off
    iopub until `until(widgets)`."""
    widgets = Widgets()
    deadline = time.monotonic() + seconds
    while not until(widgets):
        assert time.monotonic() < deadline, f"widgets seen: {len(widgets.models)}"
        try:
            msg = kernel.kc.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            continue
        widgets(msg["msg_type"], msg["content"])
    return widgets


@pytest.fixture
def plain_kernel(tmp_path: Path) -> Any:
    """A kernel whose agent has no task server; plans go to a fallback written in it."""
    env = kernel_env(tmp_path)
    env["HOME"] = str(tmp_path / "home")
    k = Kernel(str(tmp_path), env)
    try:
        for cell in ["%load_ext ollie_nb", "import ollie_nb", FALLBACK]:
            run = k.run(cell)
            assert run.error is None, run.error
        yield k
    finally:
        k.shutdown()


def test_approve_from_a_background_turn_runs_the_notebooks_fallback_on_the_kernel_thread(
    plain_kernel: Kernel,
) -> None:
    kernel = plain_kernel
    run = kernel.run(PLAN.replace("%%ollie", "%%ollie --bg", 1))
    assert run.error is None, run.error
    opened = widgets_opened(kernel, lambda w: w.find("ButtonModel", description="Approve"))
    (approve,) = opened.find("ButtonModel", description="Approve")
    assert kernel.run("print(made_on)").text().strip() == "[]"  # held: the fallback waits
    click(kernel, approve)
    status = wait_for_status(kernel, "approved")
    assert "approved: 4 steps saved (row1, row2, row3, row4)" in status
    assert kernel.run("print(made_on)").text().strip() == "['MainThread']"


def test_a_saved_plan_opened_with_plan_edit_saves_to_the_task_server(
    kernel: Kernel, tmp_path: Path
) -> None:
    for cell in [PLAN, "%ollie plan approve 1 --no-run"]:
        run = kernel.run(cell, timeout=120)
        assert run.error is None, run.error
    db = tmp_path / "tasks.db"
    ids = {title: tid for tid, (title, _) in saved_tasks(db).items()}
    with sqlite3.connect(db) as conn:  # someone works "Prepare": its row is read-only
        conn.execute("UPDATE tasks SET status = 'in_progress' WHERE id = ?", (ids["Prepare"],))
    widgets = Widgets()
    run = kernel.run("%ollie plan edit 1", on_message=widgets)
    assert run.error is None, run.error
    prepare = widgets.models[widgets.find("TextModel", value="Prepare")[0]]
    assert prepare["disabled"] is True
    (left,) = widgets.find("TextModel", value="Left")
    set_value(kernel, left, "Left, renamed")
    (save,) = widgets.find("ButtonModel", description="Save changes")
    click(kernel, save)
    status = wait_for_status(kernel, "saved")
    assert f"saved: step [{ids['Left']}]: title changed to &#x27;Left, renamed&#x27;" in status
    assert saved_tasks(db)[ids["Left"]][0] == "Left, renamed"


def test_a_revision_asked_from_the_handle_is_held_again_in_an_editor(plain_kernel: Kernel) -> None:
    kernel = plain_kernel
    run = kernel.run(PLAN, timeout=120)
    assert run.error is None, run.error
    widgets = Widgets()
    reject = "ollie_nb.agent().reject_plan(1, 'add a rollback step', run=True);"
    run = kernel.run(reject, timeout=120, on_message=widgets)
    assert run.error is None, run.error
    assert "plan 2, as a draft" in run.text() and "Revise: add a rollback step" in run.text()
    (approve,) = widgets.find("ButtonModel", description="Approve")
    click(kernel, approve)
    assert "approved: 5 steps saved (row1, row2, row3, row4, row5)" in wait_for_status(
        kernel, "approved"
    )
