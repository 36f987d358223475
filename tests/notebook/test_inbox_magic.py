"""`%ollie inbox` in a real kernel: the open requests of the agent's ollie-tasks, answered once."""

from __future__ import annotations

import pytest

from ollie_nb.tasks import open_store
from ollie_nb.tasks._inbox import Inbox
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel

pytestmark = pytest.mark.slow  # a kernel and an ollie-tasks process


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    ok = k.run("%load_ext ollie_nb")
    assert ok.error is None, ok.error
    yield k
    k.shutdown()


def test_the_inbox_lists_open_requests_and_answers_one_once(kernel, tmp_path):
    with open_store(tmp_path / "tasks.db") as store:
        asked = Inbox(store).ask("approval", "fetch <b>https://example.org</b>", "w1")
    assert "exposes task_create" in kernel.run(f"%ollie agent {tasks_agent_file(tmp_path)}").text()
    listed = kernel.run("%ollie inbox")
    assert asked in listed.text() and "w1" in listed.text(), listed.text()
    assert "<b>https" not in listed.html() and "&lt;b&gt;https" in listed.html()  # escaped
    answered = kernel.run(f"%ollie inbox answer {asked} allow --by ann")
    assert f"answered {asked}: allow" in answered.text(), answered.text()
    again = kernel.run(f"%ollie inbox answer {asked} deny")
    assert "answered already by ann" in again.text(), again.text()
    assert "nothing waits on an answer" in kernel.run("%ollie inbox").text()
    with open_store(tmp_path / "tasks.db") as store:
        (row,), _ = Inbox(store).list("answered")
    assert (row.answer, row.answered_by) == ("allow", "ann")
