"""A notebook call costs its own work: the pump wakes when the call finishes, not on a tick."""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from collections.abc import Iterator

import pytest

from ollie_nb.notebook._runtime import TICK, NotebookRuntime

CALLS = 20


@pytest.fixture
def runtime() -> Iterator[NotebookRuntime]:
    """A runtime whose core is never used (the calls here do not touch it)."""
    made = NotebookRuntime(lambda: None)  # type: ignore[arg-type,return-value]
    yield made
    made.close()


def _median_seconds(runtime: NotebookRuntime, fn: object) -> float:
    times = []
    for _ in range(CALLS):
        began = time.perf_counter()
        runtime.call(fn)  # type: ignore[arg-type]
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def test_a_no_op_call_returns_well_within_one_tick(runtime: NotebookRuntime) -> None:
    assert _median_seconds(runtime, lambda: asyncio.sleep(0)) < TICK / 5


def test_a_call_that_runs_code_on_the_kernel_thread_returns_within_one_tick(
    runtime: NotebookRuntime,
) -> None:
    ran_on: list[str] = []

    async def via_main() -> None:
        await runtime.run_on_main(lambda: ran_on.append(threading.current_thread().name))

    assert _median_seconds(runtime, via_main) < TICK / 5
    assert set(ran_on) == {threading.current_thread().name}


def test_a_tick_still_runs_while_a_call_waits(runtime: NotebookRuntime) -> None:
    ticks: list[float] = []
    future = runtime.submit(lambda: asyncio.sleep(4 * TICK))
    runtime.pump(future, tick=lambda: ticks.append(time.monotonic()))
    assert len(ticks) >= 2
