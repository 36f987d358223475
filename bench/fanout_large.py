"""A parallel run over a plan of 1,000 independent 10 ms steps, 8 sub-agents.

Each step's child (the offline model, scripted) calls an MCP `sleep` tool for 10 ms,
then marks its task done with `task_update`; `run_plan(parallel=8)` works the plan on
a real ollie-tasks server (SQLite). Held to the ideal of 1,000 x 10 ms / 8 = 1.25 s:
goal, under 5 ms of overhead per step. The task server's calls are counted per step.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, median
from bench.fanout import _agent, step_worker
from ollie_nb.core import AgentCore
from ollie_nb.llm import OfflineBackend

STEPS = 1000
SMOKE_STEPS = 12
WIDTH = 8
WORK = 0.010  # s of each step's tool call
GOAL_MS = 5.0  # ms of overhead per step


def _plan(steps: int) -> str:
    return "Many chores\n" + "\n".join(f"- chore {i} (independent)" for i in range(1, steps + 1))


def _count_calls(core: AgentCore) -> Counter[str]:
    """Count the task server's tool calls, by tool, from now on."""
    assert core.servers is not None
    server = core.servers.dispatcher.get_server("tasks")
    assert server is not None
    calls: Counter[str] = Counter()
    call_tool = server.call_tool

    async def counted(name: str, args: dict[str, Any]) -> Any:
        calls[name] += 1
        return await call_tool(name, args)

    server.call_tool = counted  # type: ignore[method-assign]
    return calls


async def _one_run(settings: Settings, repeat: int, steps: int) -> tuple[float, Counter[str]]:
    """Plan the steps, then time run_plan(parallel=8); (seconds, calls by tool)."""
    core = AgentCore(
        OfflineBackend(step_worker(WORK)),
        agent=_agent(settings.scratch / f"fanout-large-{repeat}.db"),
        workdir=settings.scratch,
        autosave=False,
        execute=False,
    )
    async with core:
        await core.submit(_plan(steps))
        record = core.plans[-1]
        if len(record.ids) != steps:
            raise RuntimeError(f"the plan has {len(record.ids)} steps, not {steps}")
        calls = _count_calls(core)
        began = time.perf_counter()
        run = await core.runs.run_plan(parallel=WIDTH)
        seconds = time.perf_counter() - began
        if run.failed or len(run.outcome) != steps:
            raise RuntimeError(f"the run did not finish: {run.summary}")
    return seconds, calls


async def run(settings: Settings) -> list[Figure]:
    """The run's overhead per step against the ideal, and its task server calls per step."""
    steps = settings.size(STEPS, SMOKE_STEPS)
    ideal = steps * WORK / WIDTH
    runs = [await _one_run(settings, r, steps) for r in range(settings.repeats(3, 1))]
    seconds = median([s for s, _ in runs])
    overhead = [(s - ideal) / steps * 1000 for s, _ in runs]
    per_step = median([sum(c.values()) / steps for _, c in runs])
    tools = ", ".join(f"{t} {n / steps:.2f}" for t, n in runs[-1][1].most_common())
    ms = median(overhead)
    print(
        f"parallel run of {steps} x {WORK * 1000:g} ms steps, {WIDTH} sub-agents: "
        f"median {seconds:.2f} s against {ideal:.2f} s ideal ({seconds / ideal:.2f}x), "
        f"overhead {ms:.2f} ms per step, {per_step:.2f} task server calls per step ({tools})"
    )
    return [
        Figure(
            what=f"run_plan(parallel={WIDTH}): {steps} independent {WORK * 1000:g} ms steps",
            unit="s",
            ours=seconds,
            baseline=ideal,
            baseline_what=f"the ideal: {steps} x {WORK * 1000:g} ms / {WIDTH}",
            samples=len(runs),
            note=f"{per_step:.2f} task server calls per step",
        ),
        Figure(
            what=f"overhead per step of that run ({per_step:.2f} task calls per step)",
            unit="ms",
            ours=ms,
            goal=f"< {GOAL_MS:g} ms",
            met=ms < GOAL_MS,
            samples=len(runs),
        ),
    ]


ROW = Row("fanout-1000", "Sub-agents: a parallel run over 1,000 steps", run)
