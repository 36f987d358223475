"""A freshly started stdio `ollie-tasks`: start and first tool call, ours vs the bare SDK.

Ours is McpServer.connect + call_tool (what the agent does on its first task tool);
the baseline is the SDK's own `Client` on the same command, in its default mode. Both
include the server process's start (Python, the SDK's imports, the database), which is
where nearly all of the time goes; the first call itself costs as much as a later one.
"""

from __future__ import annotations

import sys
import time

from mcp import Client

from bench._report import Figure
from bench._run import Row, Settings, median
from bench._servers import task_server_args, task_server_params
from ollie_nb.tools import McpServer

GOAL = 1.10


async def _ours(db: str) -> tuple[float, float]:
    started = time.perf_counter()
    server = McpServer("tasks", command=sys.executable, args=task_server_args(db))
    try:
        await server.connect()
        connected = time.perf_counter()
        await server.call_tool("task_list", {})
        return connected - started, time.perf_counter() - connected
    finally:
        await server.aclose()


async def _raw(db: str) -> tuple[float, float]:
    started = time.perf_counter()
    async with Client(task_server_params(db)) as client:
        connected = time.perf_counter()
        await client.call_tool("task_list", {})
        return connected - started, time.perf_counter() - connected


async def run(settings: Settings) -> list[Figure]:
    """Start a fresh server per sample, alternating ours and the SDK's."""
    samples = settings.repeats(12, 3)
    ours, raw, first = [], [], []
    for i in range(samples):
        a = await _ours(str(settings.scratch / f"first-ours-{i}.db"))
        b = await _raw(str(settings.scratch / f"first-raw-{i}.db"))
        ours.append(sum(a))
        raw.append(sum(b))
        first.append(a[1])
    o, b = median(ours), median(raw)
    return [
        Figure(
            what="fresh stdio ollie-tasks: start + first task_list (McpServer)",
            unit="s",
            ours=o,
            baseline=b,
            baseline_what="the SDK's Client on the same command, start + first call",
            max_ratio=GOAL,
            samples=samples,
            note=f"of ours, the first call itself: {median(first) * 1000:.0f} ms",
        )
    ]


ROW = Row("first-tool-call", "First call to a freshly started stdio server", run)
