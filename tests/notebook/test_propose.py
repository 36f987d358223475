"""`python_propose` tells the model where the new cell really appears (a real kernel).

The frontend makes the cell from the execute_reply of the cell that is running
(`set_next_input`). A foreground turn's cell is that cell; a `--bg` turn's cell has
already replied, so the new cell comes with the reply of the next cell the user runs.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.notebook.test_tools import SETUP
from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.waits import output_until, wait_until

PROPOSE = "call python_propose " + json.dumps({"code": "total = 41 + 1", "note": "the sum"})


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("propose")
    k = Kernel(str(base), kernel_env(base))
    assert k.run("%load_ext ollie_nb").error is None
    assert k.run(textwrap.dedent(SETUP)).error is None
    yield k
    k.shutdown()


def proposals(reply: dict) -> list[str]:
    return [p["text"] for p in reply.get("payload", []) if p.get("source") == "set_next_input"]


def tool_said(kernel: Kernel) -> tuple[str, list[str]]:
    """The last tool result the model got, and the proposals in this cell's reply."""
    run = kernel.run(
        "print([m.content for m in ollie_nb.agent().history if m.role == 'tool'][-1:])"
    )
    return run.text(), proposals(kernel.reply(run))


def test_a_foreground_proposal_is_a_cell_below_the_running_one(kernel):
    run = kernel.run(f"%ollie ask {PROPOSE}")
    assert proposals(kernel.reply(run)) == ["# the sum\ntotal = 41 + 1"]
    assert "in a new cell below the running one" in tool_said(kernel)[0]


def test_a_background_proposal_says_the_cell_comes_with_the_next_cell_run(kernel):
    run = kernel.run(f"%%ollie --bg\n{PROPOSE}")
    assert proposals(kernel.reply(run)) == []  # the cell replied before the tool ran
    seen: list[str] = []
    said = ""

    def probe() -> bool:  # each probe is a cell the user runs next: the cell comes with its reply
        nonlocal said
        said, proposed = tool_said(kernel)
        seen.extend(proposed)
        return "background" in said

    wait_until(probe, 30, "the tool to say where the cell appears", interval=0.2)
    assert "appears below the next cell the user runs (not below this one)" in said
    assert seen == ["# the sum\ntotal = 41 + 1"]
    shown = kernel.run("print([o['data']['text/plain'] for o in _.output.outputs if 'data' in o])")
    assert "total = 41 + 1" in shown.text() and "below the next cell you run" in shown.text()


def test_a_background_turn_waits_for_the_model_after_a_tool_not_for_the_tool(kernel):
    kernel.run("import threading; gate = threading.Event()")
    slow = (
        "def slow(messages, tools):\n"
        "    if messages[-1].role == 'tool':\n"
        "        gate.wait(20)\n"
        "        return 'done'\n"
        "    return [ToolCall('c1', 'reasoning_think', json.dumps({'thought': 'x'}))]\n"
        "ollie_nb.use_backend(OfflineBackend(slow))"
    )
    assert kernel.run(slow).error is None
    kernel.run("%%ollie --bg\nthink first")
    kernel.run("bg = _")
    output_until(kernel, "print(bg.status.value)", "waiting for the model", 20)
    kernel.run("gate.set()")
    kernel.run("ollie_nb.use_backend(OfflineBackend(script))")
