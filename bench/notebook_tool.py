"""A notebook-defined tool called through the Dispatcher vs the same function called directly.

The tool is an async function with typed arguments, registered on a NotebookToolServer
as `@ollie_nb.tool` does, so it runs on the loop (the kernel-thread hop of sync tools
is the runtime's, not measured here). Ours is `Dispatcher.dispatch` with JSON-shaped
arguments: argument cleaning, pydantic validation, the call, the result text and cap.
The baseline awaits the function with the same arguments. Calls alternate one by one.
"""

from __future__ import annotations

from bench._report import Figure
from bench._run import Row, Settings, alternate, median
from ollie_nb.tools import Dispatcher, NotebookToolServer

GOAL_US = 100.0
WARM_UP = 200


async def region_total(region: str, scale: float = 1.0, tags: list[str] | None = None) -> float:
    """Total sales of one region (a stand-in with a notebook tool's shape)."""
    return len(region) * scale + len(tags or ())


async def run(settings: Settings) -> list[Figure]:
    """Time single calls, ours and the direct call alternating."""
    calls = settings.repeats(20_000, 2_000)
    server = NotebookToolServer()
    server.add(region_total)
    dispatcher = Dispatcher()
    dispatcher.add_server("notebook", server)
    args = {"region": "north", "scale": 2, "tags": ["q1", "q2"]}

    async def ours() -> None:
        await dispatcher.dispatch("notebook", "region_total", args)

    async def direct() -> None:
        await region_total("north", 2.0, ["q1", "q2"])

    answer = await dispatcher.dispatch("notebook", "region_total", args)
    if answer.is_error or answer.text != "12.0":
        raise RuntimeError(f"the notebook tool answered {answer.text!r}")
    for _ in range(settings.size(WARM_UP, 2)):
        await ours()
        await direct()
    times = await alternate({"ours": ours, "direct": direct}, calls)
    added_us = median([o - d for o, d in zip(times["ours"], times["direct"])]) * 1e6
    return [
        Figure(
            what="notebook tool call: Dispatcher + NotebookToolServer",
            unit="ms",
            ours=median(times["ours"]) * 1000,
            baseline=median(times["direct"]) * 1000,
            baseline_what="awaiting the same async function directly",
            goal=f"added < {GOAL_US:g} µs",
            met=added_us < GOAL_US,
            samples=calls,
            note=f"{added_us:+.1f} µs per call (median of the pairs' differences)",
        )
    ]


ROW = Row("notebook-tool", "Notebook tool overhead", run)
