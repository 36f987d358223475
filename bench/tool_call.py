"""A no-op tool through Dispatcher.dispatch -> McpServer vs the SDK's call_tool.

The baseline calls `call_tool` of the SDK `Client` that our McpServer holds, on its live
session: a stdio server serves one client per process, so this is the only way to put
both paths on the same server process, and it leaves exactly our layers as the difference.
"""

from __future__ import annotations

import sys

from bench._report import Figure
from bench._run import Row, Settings, alternate, median, paired_ratio
from bench._servers import NOOP_SERVER
from ollie_nb.tools import Dispatcher, McpServer

GOAL = 1.05
WARM_UP = 50


async def run(settings: Settings) -> list[Figure]:
    """Time single calls, alternating ours and the raw call one by one."""
    calls = settings.repeats(3000, 400)
    server = McpServer("noop", command=sys.executable, args=[str(NOOP_SERVER)])
    await server.connect()
    dispatcher = Dispatcher()
    dispatcher.add_server("noop", server)
    client = server._client

    async def ours() -> None:
        await dispatcher.dispatch("noop", "noop", {})

    async def raw() -> None:
        await client.call_tool("noop", {})

    try:
        answer = await dispatcher.dispatch("noop", "noop", {})
        if answer.is_error or answer.text != "ok":
            raise RuntimeError(f"the no-op tool answered {answer.text!r}")
        for _ in range(settings.size(WARM_UP, 2)):
            await ours()
            await raw()
        times = await alternate({"ours": ours, "raw": raw}, calls)
    finally:
        await dispatcher.aclose()
    o, b = median(times["ours"]), median(times["raw"])
    return [
        Figure(
            what="no-op tool call: Dispatcher + McpServer",
            unit="ms",
            ours=o * 1000,
            baseline=b * 1000,
            baseline_what="Client.call_tool on the same live stdio session",
            max_ratio=GOAL,
            samples=calls,
            paired=paired_ratio(times["ours"], times["raw"]),
            note=f"{(o - b) * 1e6:+.0f} µs per call (difference of medians)",
        )
    ]


ROW = Row("tool-call", "Tool-call overhead", run)
