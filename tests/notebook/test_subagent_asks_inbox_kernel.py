"""In a real kernel, a parallel run's sub-agent asks in the approval widget and in the task
store's inbox at once: answered with `ollie-tasks answer` in another process, the run goes
on and the widget closes saying who answered (issue 39). A model that obeys its step
(tests/support/obedient_model.py) at the OpenAI wire format; a real ollie-tasks store."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.tasks import open_store
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel
from tests.support.llm_fake_provider import FAKE_KEY
from tests.support.obedient_model import obey
from tests.support.tasks_harness import cli
from tests.support.waits import wait_until

pytestmark = pytest.mark.slow  # a kernel, ollie-tasks processes

PENDING = "from ollie_nb.notebook import _approval\nprint(len(_approval.pending()))"
STATUS = "print(_approval.recent[-1].status.value if _approval.recent else '')"
DISABLED = "print(all(b.disabled for b in _approval.recent[-1].buttons))"


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def open_requests(db: Path) -> list[tuple]:
    return rows(db, "SELECT id, asker FROM inbox WHERE answer IS NULL")


@pytest.fixture
def kernel(tmp_path: Path) -> Any:
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    try:
        assert k.run("%load_ext ollie_nb").error is None
        yield k
    finally:
        k.shutdown()


def planned(kernel: Any, tmp_path: Path, provider: Any) -> tuple[Path, str]:
    """A plan whose one step renames a task outside it (a call that asks), the kernel's
    model then one that obeys its step: (the store, the other task's id)."""
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        other = store.create("Notes")
    assert kernel.run(f"%ollie agent {tasks_agent_file(tmp_path)}").error is None
    order = json.dumps({"id": other, "title": "Renamed"})
    made = kernel.run(f"%%ollie\nTidy\n- Rename the notes: call task_edit with {order}", 120)
    assert made.error is None, made.error
    provider.respond = obey
    use = (
        "import ollie_nb\nfrom ollie_nb.llm import OpenAIBackend\n"
        f"ollie_nb.use_backend(OpenAIBackend('gpt-4o-mini', base_url={provider.url + '/v1'!r}, "
        f"api_key={FAKE_KEY!r}))"
    )
    assert kernel.run(use).error is None
    return db, other


def test_a_sub_agents_approval_answered_from_the_cli_lets_the_run_finish(
    kernel: Any, tmp_path: Path, provider: Any
) -> None:
    db, other = planned(kernel, tmp_path, provider)
    started = kernel.run("%ollie run --parallel 1 --bg", allow_stdin=True)
    assert started.error is None, started.error
    wait_until(  # short cells: the kernel's loop shows the widget between them
        lambda: kernel.run(PENDING, allow_stdin=True).text().strip() == "1",
        60,
        "the approval widget",
        interval=0.2,
    )
    [(request, asker)] = open_requests(db)
    assert asker.endswith("/worker1"), asker
    answered = cli(db, "answer", request, "allow", "--by", "ann")
    assert answered.returncode == 0, answered.stderr
    wait_until(
        lambda: "ann" in kernel.run(STATUS, allow_stdin=True).text(),
        60,
        "the widget closed by the inbox's answer",
        interval=0.2,
    )
    assert kernel.run(STATUS).text().strip() == "allow once (answered by ann in the inbox)"
    assert kernel.run(DISABLED).text().strip() == "True"
    wait_until(
        lambda: rows(db, f"SELECT title FROM tasks WHERE id = '{other}'") == [("Renamed",)],
        60,
        "the call to run",
    )
    step = kernel.run("print(ollie_nb.agent().plans[-1].ids[0])").text().strip()
    wait_until(
        lambda: rows(db, f"SELECT status FROM tasks WHERE id = '{step}'") == [("done",)],
        60,
        "the step done",
    )


def test_a_foreground_runs_widget_closes_when_the_cli_answers(
    kernel: Any, tmp_path: Path, provider: Any
) -> None:
    db, other = planned(kernel, tmp_path, provider)

    def answer() -> None:  # another process answers while the cell waits on the widget
        wait_until(lambda: open_requests(db), 60, "the sub-agent's inbox request")
        [(request, _asker)] = open_requests(db)
        cli(db, "answer", request, "deny", "--by", "ann")

    answering = threading.Thread(target=answer, daemon=True)
    answering.start()
    run = kernel.run("%ollie run --parallel 1", timeout=120, allow_stdin=True)
    answering.join(60)
    assert run.error is None, run.error
    assert kernel.run(PENDING).text().strip() == "0"  # no widget left waiting
    assert kernel.run(STATUS).text().strip() == "deny (answered by ann in the inbox)"
    assert rows(db, f"SELECT title FROM tasks WHERE id = '{other}'") == [("Notes",)]
