"""Fallback PlanBackends that raise, hang or answer garbage, through AgentCore and a real kernel.

Whatever the fallback does, reasoning_plan returns the in-context plan with exactly one
warning line, the turn goes on, the history stays consistent, and the next plan works.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
import threading
import time

import pytest

from ollie_nb.core import AgentConfig, ToolFinished
from ollie_nb.llm import OfflineBackend, ToolCall
from ollie_nb.planning import PlanResult
from tests.support.agents import assert_consistent, kernel_env
from tests.support.kernel_harness import Kernel

PLAN = {"goal": "Bake", "steps": [{"title": "mix"}, {"title": "bake", "after": [0]}]}
IN_CONTEXT = "1. mix\n2. bake\n   after: step 1"


class Switchable:
    """A fallback whose behaviour the test changes between plans."""

    def __init__(self):
        self.behaviour = None

    def create_plan(self, goal, steps):
        return self.behaviour(goal, steps)


async def plan_twice(make_core, first, plan_timeout: float = 2.0, between=None):
    """Two turns each calling reasoning_plan: the first with `first` as the fallback's
    behaviour, the second with a good one (`between()` runs in between). Returns the
    first plan's status line and how long its turn took."""
    model = OfflineBackend(
        lambda messages, tools: (
            "noted"
            if messages[-1].role == "tool"
            else [ToolCall(f"c{len(messages)}", "reasoning_plan", json.dumps(PLAN))]
        )
    )
    fallback = Switchable()
    core = await make_core(
        model,
        agent=AgentConfig.from_dict({"planTimeout": plan_timeout}),
        fallback_plan_backend=fallback,
        autosave=True,
        start=False,
    )
    out = []
    async with core:
        for behaviour in (first, lambda goal, steps: ["ok-1", "ok-2"]):
            fallback.behaviour = behaviour
            events: list = []
            started = time.perf_counter()
            result = await core.submit("plan", events.append)
            (text,) = [e.result for e in events if isinstance(e, ToolFinished)]
            out.append((text, result, time.perf_counter() - started))
            if between is not None:
                between()
    (bad, bad_result, seconds), (good, good_result, _) = out
    assert bad_result.reply == good_result.reply == "noted"
    assert IN_CONTEXT in bad and "[" not in bad.split("\n\n")[0]  # no ids on the steps
    warnings = [line for line in bad.splitlines() if "warning" in line]
    assert warnings == [bad.splitlines()[-1]], "exactly one warning line, the last"
    assert bad.splitlines()[-1].endswith("; this plan lives in context only.")
    assert "[ok-2] bake" in good and good.splitlines()[-1] == "Plan saved by Switchable: 2 steps."
    assert_consistent(core.session.history)
    return bad.splitlines()[-1], seconds


def raise_(exc):
    def behaviour(goal, steps):
        raise exc

    return behaviour


GARBAGE = [
    ("str", lambda g, s: "t-1 t-2", "returned str; expected a list of ids or a PlanResult"),
    ("int", lambda g, s: 2, "returned int; expected a list of ids or a PlanResult"),
    ("generator", lambda g, s: (f"g{i}" for i in range(2)), "returned generator"),
    ("dict", lambda g, s: {"mix": "a", "bake": "b"}, "returned dict"),
    ("none-ids", lambda g, s: [None, "b"], "returned 1 ids for 2 steps"),
    ("duplicate-ids", lambda g, s: ["a", "a"], "returned 1 ids for 2 steps"),
    ("too-many", lambda g, s: ["a", "b", "c"], "returned 3 ids for 2 steps"),
    ("blank-result", lambda g, s: PlanResult(ids=["", ""]), "returned no ids for 2 steps"),
    ("ids-not-a-list", lambda g, s: PlanResult(ids=None), "failed ("),
]


@pytest.mark.parametrize(("name", "behaviour", "expected"), GARBAGE, ids=[g[0] for g in GARBAGE])
@pytest.mark.anyio
async def test_garbage_answers_degrade_with_one_warning(make_core, name, behaviour, expected):
    status, _ = await plan_twice(make_core, behaviour)
    assert status.startswith("warning: Switchable ")
    assert expected in status


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (ValueError("first line\nsecond line"), "(first line)"),
        (RuntimeError(), "(RuntimeError)"),
        (OSError(28, "No space left on device"), "([Errno 28] No space left on device)"),
        (RecursionError("maximum recursion depth exceeded"), "(maximum recursion depth exceeded)"),
    ],
    ids=["multi-line", "no-message", "os-error", "recursion"],
)
@pytest.mark.anyio
async def test_raising_fallbacks_degrade_with_one_warning(make_core, exc, reason):
    status, _ = await plan_twice(make_core, raise_(exc))
    assert status == f"warning: Switchable failed {reason}; this plan lives in context only."


@pytest.mark.anyio
async def test_hanging_sync_fallback_is_cut_by_plan_timeout(make_core):
    release = threading.Event()

    def hang(goal, steps):
        release.wait(30)
        return ["late-1", "late-2"]

    try:  # the worker thread is stuck, not the loop; let it go before the loop closes
        status, seconds = await plan_twice(make_core, hang, plan_timeout=0.5, between=release.set)
    finally:
        release.set()
    assert status == (
        "warning: Switchable failed (no answer within 0.5 s); this plan lives in context only."
    )
    assert seconds < 2.0


@pytest.mark.anyio
async def test_hanging_async_fallback_is_cancelled(make_core, tmp_path):
    cancelled = []

    class Forever:
        behaviour = None

        async def create_plan(self, goal, steps):
            if self.behaviour is not None:
                return self.behaviour(goal, steps)
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

    fallback = Forever()
    core = await make_core(
        OfflineBackend(turns=[[ToolCall("c", "reasoning_plan", json.dumps(PLAN))], "noted"]),
        agent=AgentConfig.from_dict({"planTimeout": 0.3}),
        fallback_plan_backend=fallback,
        autosave=True,
        start=False,
    )

    async def scenario():
        async with core:
            events: list = []
            await core.submit("plan", events.append)
            return [e.result for e in events if isinstance(e, ToolFinished)]

    (text,) = await scenario()
    assert text.endswith(
        "Forever failed (no answer within 0.3 s); this plan lives in context only."
    )
    assert cancelled == [True]
    assert_consistent(core.session.history)


# -- notebook fallbacks run on the kernel thread ------------------------------------

NOTEBOOK_FALLBACKS = """
import sys, time

def slow(goal, steps):
    time.sleep(1.5)  # a slow fallback: the behaviour under test
    return ["late"] * len(steps)

def exits(goal, steps):
    sys.exit(3)

def listing(goal, steps):
    return {"ids": ["a", "b"]}
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("fallbacks")
    k = Kernel(str(base), kernel_env(base))
    agent = base / "quick.json"
    agent.write_text(json.dumps({"planTimeout": 0.5}))
    assert k.run("%load_ext ollie_nb").error is None
    assert k.run(textwrap.dedent(NOTEBOOK_FALLBACKS)).error is None
    assert "agent: quick" in k.run(f"%ollie agent {agent}").text()
    yield k
    k.shutdown()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # planTimeout cannot stop code on the kernel thread: it is waited for, and told apart
        ("slow", "past planTimeout 0.5 s: code running on the kernel thread cannot be stopped"),
        ("exits", "exits() failed (interrupted (SystemExit))"),
        ("listing", "listing() returned dict; expected a list of ids or a PlanResult"),
    ],
)
def test_notebook_fallback_faults_leave_the_kernel_working(kernel, name, expected):
    assert "fallback set to" in kernel.run(f"%ollie fallback {name}").text()
    run = kernel.run("%%ollie\nBake\n- mix\n- bake")
    assert run.error is None and "Traceback" not in run.stderr() + run.text()
    assert expected in run.text()
    assert "this plan lives in context only" in run.text()
    kernel.run("%ollie fallback off")
    after = kernel.run("%%ollie\nhello")
    assert after.error is None and "I am the offline model" in after.text()
    assert "idle" in kernel.run("%ollie status").text()
