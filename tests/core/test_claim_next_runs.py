"""A parallel run on a server with task_claim_next: one call claims each step, and a step its
child marked done is settled without reading it again (a real ollie-tasks subprocess)."""

from __future__ import annotations

import pytest

from ollie_nb.core import _parallel_run
from tests.core.test_parallel_plans import claims_and_dones
from tests.core.test_parallel_reads import run_counting


@pytest.mark.slow
def test_a_run_claims_with_claim_next_and_settles_without_a_read(tmp_path, monkeypatch):
    monkeypatch.setattr(_parallel_run, "REFRESH", 60.0)  # no refresh by age in this short run
    record, run, reads, calls, db = run_counting(tmp_path, parallel=2)
    assert not run.failed and len(run.outcome) == 8, run.summary
    assert calls["task_claim_next"] == 8 and calls["task_claim"] == 0, calls
    # the plan's reads only (each a task_list of the goal): no read per settled step
    assert calls["task_list"] == len(reads) and calls["task_read"] == 0, (calls, reads)
    claims, dones = claims_and_dones(db)
    assert all(len(claims[i]) == 1 and len(dones[i]) == 1 for i in record.ids)
