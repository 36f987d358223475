"""A do-nothing notebook call into the core vs a bare round trip to the runtime's loop thread.

Ours is `NotebookRuntime.call(lambda: asyncio.sleep(0))`, what every `%ollie` command and
`agent.call` pays around its own work: submit to the loop thread, pump the kernel thread's
inbox until the call is done. The baseline hands the same coroutine to the same loop with
`run_coroutine_threadsafe` and blocks on its result: the thread hop alone, no pump.
Calls alternate one by one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from bench._report import Figure
from bench._run import Row, Settings, median, paired_ratio
from ollie_nb.notebook._runtime import NotebookRuntime

GOAL_MS = 1.0
WARM_UP = 20


def _timed(fn: Callable[[], None]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


async def run(settings: Settings) -> list[Figure]:
    """Time no-op calls through the runtime and bare round trips, alternating."""
    calls = settings.repeats(500, 100)
    runtime = NotebookRuntime(lambda: None)  # type: ignore[arg-type,return-value]
    try:

        def ours() -> None:
            runtime.call(lambda: asyncio.sleep(0))

        def bare() -> None:
            asyncio.run_coroutine_threadsafe(asyncio.sleep(0), runtime.loop).result()

        for _ in range(settings.size(WARM_UP, 2)):
            ours()
            bare()
        times: dict[str, list[float]] = {"ours": [], "bare": []}
        for i in range(calls):
            order = ("ours", "bare") if i % 2 == 0 else ("bare", "ours")
            for name in order:
                times[name].append(_timed(ours if name == "ours" else bare))
    finally:
        runtime.close()
    ms = median(times["ours"]) * 1000
    return [
        Figure(
            what="no-op notebook call (NotebookRuntime.call, asyncio.sleep(0))",
            unit="ms",
            ours=ms,
            baseline=median(times["bare"]) * 1000,
            baseline_what="run_coroutine_threadsafe on the same loop, .result()",
            goal=f"< {GOAL_MS:g} ms",
            met=ms < GOAL_MS,
            samples=calls,
            paired=paired_ratio(times["ours"], times["bare"]),
            note="50.3 ms before the pump woke on a finished call",
        )
    ]


ROW = Row("notebook-call", "No-op notebook call", run)
