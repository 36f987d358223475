"""A parallel run over a plan of 1,000 independent 10 ms steps, 8 sub-agents.

Each step's child (the offline model, scripted) calls an MCP `sleep` tool for 10 ms,
then marks its task done with `task_update`; `run_plan(parallel=8)` works the plan on
a real ollie-tasks server (SQLite). Shown beside the ideal of 1,000 x 10 ms / 8 = 1.25 s.
The overhead per step (goal: under 5 ms) is the run's against its floor: the same step
turns, 8 children at once, handed out with no run around them (no claims, no plan reads,
no settling), in a pair with it; a child's own turn is the step's work, not the run's
overhead. The task server's calls are counted per step.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, median
from bench.fanout import _agent, step_worker
from ollie_nb.core import AgentCore
from ollie_nb.core._budget import Ledger, Scope
from ollie_nb.llm import OfflineBackend
from ollie_nb.planning import Origin, step_item

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


def _core(settings: Settings, name: str) -> AgentCore:
    return AgentCore(
        OfflineBackend(step_worker(WORK)),
        agent=_agent(settings.scratch / name),
        workdir=settings.scratch,
        autosave=False,
        execute=False,
    )


async def _floor_run(settings: Settings, repeat: int, steps: int) -> float:
    """The floor: the plan's step turns, WIDTH children at once, each given its step's
    prompt as the run gives it, with no run around them; seconds."""
    async with _core(settings, f"fanout-large-floor-{repeat}.db") as core:
        await core.submit(_plan(steps))
        record, agents = core.plans[-1], core.subagents
        items = iter([step_item(record, i, Origin.PLAN, goal=record.goal) for i in range(steps)])
        ledger = Ledger(Scope.PLAN, name="floor")

        async def child_works(name: str) -> None:
            for item in items:
                assert item.step is not None
                if name in agents.children:
                    agents.children[name].assign(item.step.title, ledger, item.step)
                    child = agents.send(name, item.text, bypass_limit=True)
                else:
                    child = agents.spawn(name, item.text, notify=False, bypass_limit=True)
                    child.assign(item.step.title, ledger, item.step)
                await child.until_idle()

        began = time.perf_counter()
        await asyncio.gather(*(child_works(f"floor{n}") for n in range(WIDTH)))
        seconds = time.perf_counter() - began
        done = await core.plans.statuses(record)
        if sum(state.is_finished for state in done.values()) != steps:
            raise RuntimeError("the floor's children did not finish every step")
    return seconds


async def _one_run(settings: Settings, repeat: int, steps: int) -> tuple[float, Counter[str]]:
    """Plan the steps, then time run_plan(parallel=8); (seconds, calls by tool)."""
    async with _core(settings, f"fanout-large-{repeat}.db") as core:
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
    runs, floors = [], []
    for r in range(settings.repeats(3, 1)):  # side by side: the run, then its floor
        runs.append(await _one_run(settings, r, steps))
        floors.append(await _floor_run(settings, r, steps))
    seconds = median([s for s, _ in runs])
    floor = median(floors)
    overhead = [(s - f) / steps * 1000 for (s, _), f in zip(runs, floors, strict=True)]
    per_step = median([sum(c.values()) / steps for _, c in runs])
    tools = ", ".join(f"{t} {n / steps:.2f}" for t, n in runs[-1][1].most_common())
    ms = median(overhead)
    print(
        f"parallel run of {steps} x {WORK * 1000:g} ms steps, {WIDTH} sub-agents: "
        f"median {seconds:.2f} s against {ideal:.2f} s ideal ({seconds / ideal:.2f}x) and "
        f"{floor:.2f} s for the same step turns without the run, "
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
            note=f"against its floor: the same step turns, {WIDTH} at once, no run "
            f"({floor:.2f} s median)",
            goal=f"< {GOAL_MS:g} ms",
            met=ms < GOAL_MS,
            samples=len(runs),
        ),
    ]


ROW = Row("fanout-1000", "Sub-agents: a parallel run over 1,000 steps", run)
