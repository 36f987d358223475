"""The tool calls of one response run together.

One model response asks for four calls of a 1 s MCP tool (the sleep server's `sleep`,
over stdio); the turn (offline model: the calls, then a reply) is held to the ideal
of one second, the time of the longest call. Run one after another, it took four.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, median
from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import OfflineBackend

SLEEP_SERVER = Path(__file__).with_name("sleep_server.py")
CALLS = 4
WORK = 1.0  # seconds of each call
SMOKE_WORK = 0.05
GOAL = 1.15  # turn time / WORK


def _model(work: float) -> Callable[[list[Any], list[Any]], Any]:
    """A prompt gets CALLS sleep calls of `work` s in one response; their results get a reply."""

    def reply(messages: list[Any], tools: list[Any]) -> Any:
        if messages[-1].role == "user":
            return [{"name": "sleep", "arguments": {"seconds": work}}] * CALLS
        return "all four slept"

    return reply


async def run(settings: Settings) -> list[Figure]:
    """Time turns of one four-call response against the ideal of one call's time."""
    samples = settings.repeats(7, 2)
    work = settings.size(WORK, SMOKE_WORK)
    server = {"command": sys.executable, "args": [str(SLEEP_SERVER)]}
    agent = AgentConfig.from_dict({"mcpServers": {"work": server}, "trustedTools": ["sleep"]})
    times = []
    with tempfile.TemporaryDirectory(dir=settings.scratch) as workdir:
        core = AgentCore(OfflineBackend(_model(work)), agent=agent, workdir=workdir, autosave=False)
        async with core:
            for _ in range(samples + 1):  # the first turn warms the session up
                core.session.clear()
                began = time.perf_counter()
                result = await core.submit("sleep four times")
                times.append(time.perf_counter() - began)
                results = [m.content for m in core.session.history if m.role == "tool"]
                if result.reply != "all four slept" or results != ["slept"] * CALLS:
                    raise RuntimeError(f"the turn went wrong: {result.reply!r}, {results}")
    ours = median(times[1:])
    return [
        Figure(
            what=f"one response, {CALLS} calls of a {work:g} s MCP tool: the turn",
            unit="s",
            ours=ours,
            baseline=work,
            baseline_what=f"the ideal: one call's {work:g} s",
            max_ratio=GOAL,
            samples=samples,
            note=f"one after another: {CALLS * work:g} s; slowest turn {max(times[1:]):.2f} s",
        )
    ]


ROW = Row("parallel-tools", "Tool calls of one response run together", run)
