"""`%ollie plan retry N STEP` in a kernel: a failed step and the steps after it reopened."""

from __future__ import annotations

import ast

import pytest

from ollie_nb.tasks import open_store
from tests.core.test_step_retry import rows
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel

CHAIN = "%%ollie\nChain\n- First\n- Middle (after 1)\n- Last (after 2)\n- Tail (after 3)"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbretry")
    k = Kernel(str(base), kernel_env(base))
    k.run("%load_ext ollie_nb")
    yield k, base
    k.shutdown()


@pytest.mark.slow
def test_plan_retry_reopens_the_failed_step_and_those_waiting_on_it(kernel):
    k, base = kernel
    k.run(f"%ollie agent {tasks_agent_file(base)}")
    k.run(CHAIN)
    ids = ast.literal_eval(
        k.run("import ollie_nb\nprint(list(ollie_nb.agent().plans[-1].ids))").text().strip()
    )
    first, middle, last, tail = ids
    db = base / "tasks.db"
    with open_store(db, create=False) as store:
        store.update(first, status="done")
        store.update(middle, status="failed", assignee="w1")
        store.update(last, status="cancelled")
    said = k.run("%ollie plan retry 1 2").text()
    assert (
        said == f"ℹ plan 1: reopened {middle}, {last}, {tail}; they go to whoever serves the plan"
    )
    after = rows(db)
    assert [after[s] for s in ids] == [("done", ""), ("open", ""), ("open", ""), ("open", "")]
    refused = k.run(f"%ollie plan retry 1 {first}")
    assert "is done: only a step not done is retried" in refused.text() + str(refused.error)
