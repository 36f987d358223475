"""In a kernel, as the issue tried it: a 4-step chain under a session token cap with the queue
fallback; `%ollie queue` keeps the capped step first, and after the cap is raised `%ollie run`
works it, so `%ollie plan` reads every step done."""

from __future__ import annotations

import pytest

from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel


@pytest.mark.slow
def test_a_capped_queue_plan_continues_with_its_capped_step(tmp_path):
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    try:
        k.run("%load_ext ollie_nb")
        assert k.run("%ollie fallback queue").error is None
        k.run("%config OllieMagics.max_session_tokens = 700")
        capped = k.run("%%ollie\nCook dinner\n- a\n- b\n- c\n- d", timeout=120)
        assert "the session's token cap 700 is reached" in capped.text()
        queue = k.run("%ollie queue").text()
        assert "1  Step 3 of 4 [q3]: c" in queue and "2  Step 4 of 4 [q4]: d" in queue, queue
        k.run("%config OllieMagics.max_session_tokens = 0")
        assert k.run("%ollie run", timeout=120).error is None
        plan = k.run("%ollie plan").text()
        states = [
            line.split()[:2] for line in plan.splitlines() if line[:2] in ("1.", "2.", "3.", "4.")
        ]
        assert ["3.", "done"] in states and ["4.", "done"] in states, plan
        assert "4 of 4 steps done" in plan, plan
    finally:
        k.shutdown()
