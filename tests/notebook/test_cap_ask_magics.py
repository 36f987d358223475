"""`OllieMagics.ask_at_caps` and `%ollie run --ask` in a real kernel: asking at caps is on for
every run, or for one run only (what the asking does: tests/core/test_cap_ask_core.py)."""

from __future__ import annotations

import pytest

from tests.notebook.test_parallel import PLAN
from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel

pytestmark = pytest.mark.slow  # a kernel

SETUP = """
import ollie_nb
from ollie_nb.llm import Message, OfflineBackend
from ollie_nb.notebook import _state

seen = []

async def reply(messages, tools):
    seen.append(_state.active().core.cap_ask.asking)  # on the loop, at the model request
    return Message.assistant("ok")

ollie_nb.use_backend(OfflineBackend(reply))
rt = _state.active()

async def asking():
    return rt.core.cap_ask.on, rt.core.cap_ask.asking

async def queue(text):
    rt.core.prompts.put(text)
"""


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    assert k.run("%load_ext ollie_nb").error is None
    yield k
    k.shutdown()


def test_the_trait_turns_asking_at_caps_on_at_start_and_off_while_running(kernel):
    assert kernel.run("%config OllieMagics.ask_at_caps = True").error is None  # before start
    assert kernel.run(SETUP).error is None
    assert kernel.run("print(rt.call(asking))").text().strip() == "(True, True)"
    assert kernel.run("%config OllieMagics.ask_at_caps = False").error is None
    assert kernel.run("print(rt.call(asking))").text().strip() == "(False, False)"
    bad = kernel.run("%config OllieMagics.ask_at_caps = 'maybe'")
    assert "ask_at_caps" in (bad.error or "") + bad.stderr()


def test_run_ask_asks_at_caps_for_that_run_only(kernel):
    assert kernel.run(SETUP).error is None
    assert kernel.run("rt.call(lambda: queue('first'))").error is None
    run = kernel.run("%ollie run --ask")
    assert run.error is None and "ok" in run.text(), run.texts()
    assert kernel.run("rt.call(lambda: queue('second'))").error is None
    assert kernel.run("%ollie run").error is None
    assert kernel.run("print(seen, rt.call(asking))").text().strip() == (
        "[True, False] (False, False)"
    )
    assert kernel.run("rt.call(lambda: queue('third'))").error is None
    assert kernel.run("%ollie run --bg --ask").error is None  # released when the turn ends
    ended = kernel.run("rt.pump(rt.turn_future, timeout=30)\nprint(seen[-1], rt.call(asking))")
    assert ended.text().strip() == "True (False, False)", ended.texts()
    bad = kernel.run("%ollie run --ask=yes")
    assert "--ask" in (bad.error or "") + bad.text() + bad.stderr()


SPY = """
from ollie_nb.notebook import _state

rt = _state.active()
seen, run_plan = [], rt.core.runs.run_plan

async def spy(*args, **kwargs):
    seen.append(rt.core.cap_ask.asking)  # on the loop, as the run starts
    return await run_plan(*args, **kwargs)

rt.core.runs.run_plan = spy

async def asking():
    return rt.core.cap_ask.asking
"""


def test_run_parallel_ask_asks_while_that_run_works(kernel, tmp_path):
    assert kernel.run(f"%ollie agent {tasks_agent_file(tmp_path)}").error is None
    assert kernel.run(PLAN).error is None
    assert kernel.run(SPY).error is None
    run = kernel.run("%ollie run --parallel 2 --ask", timeout=120)
    assert run.error is None and "steps done by sub-agents" in run.text(), run.texts()
    assert kernel.run("print(seen, rt.call(asking))").text().strip() == "[True] False"
