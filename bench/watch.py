"""The reactive agent: wake latency, idle CPU of the watch, a 20-step chain worked by itself.

Wake latency is timed from just before an outside `task_update` marks step 1 of a
two-step plan done to the `turn_start` of the agent's turn for step 2: once with the
update sent through the agent's own task-server process, once through a second server
process on the same database (the cross-process signal). Baseline: that update's own
MCP round trip. The chain is a 20-step plan worked with the watch on, no user action,
against the same 20 step prompts submitted one after another.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import psutil

from bench._report import Figure
from bench._run import Row, Settings, median, paired_ratio
from bench._servers import task_server_args
from ollie_nb.core import AgentConfig, AgentCore, TurnStarted
from ollie_nb.llm import OfflineBackend
from ollie_nb.planning import step_prompt
from ollie_nb.tools import McpServer

CHAIN = 20
IDLE_SECONDS = 3.0
SMOKE_CHAIN, SMOKE_IDLE_SECONDS = 3, 0.2


def _agent(db: str) -> AgentConfig:
    server = {"command": sys.executable, "args": task_server_args(db)}
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}})


def _plan_prompt(steps: int, tag: str) -> str:
    return f"Goal {tag}\n" + "\n".join(f"- step {i + 1} of {tag}" for i in range(steps))


class _Starts:
    """The watch's sink: when each turn started, by the task id of its step."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}

    def __call__(self, event: Any) -> None:
        step = event.step if isinstance(event, TurnStarted) else None
        if step is not None:
            self.at[step.step_id] = time.perf_counter()


async def _wake(core: AgentCore, starts: _Starts, update: Any, tag: str) -> tuple[float, float]:
    """(wake latency, update round trip) for one fresh two-step plan."""
    await core.submit(_plan_prompt(2, tag))
    first, second = core.plans[-1].ids
    began = time.perf_counter()
    result = await update({"id": first, "status": "done"})
    sent = time.perf_counter()
    if result.is_error:
        raise RuntimeError(f"task_update failed: {result.text}")
    deadline = began + 10
    while second not in starts.at:
        if time.perf_counter() > deadline:
            raise RuntimeError("the agent did not wake within 10 s")
        await asyncio.sleep(0.001)
    await core.watch.until_idle(timeout=30)
    return starts.at[second] - began, sent - began


async def _wake_rows(settings: Settings, db: str) -> dict[str, list[float]]:
    repeats = settings.repeats(15, 3)
    starts = _Starts()
    core = AgentCore(OfflineBackend(), agent=_agent(db), workdir=settings.scratch, autosave=False)
    other = McpServer("other", command=sys.executable, args=task_server_args(db))
    times: dict[str, list[float]] = {k: [] for k in ("same", "same_rt", "other", "other_rt")}
    async with core:
        await other.connect()
        try:
            await core.watch.start(on_event=starts)
            own = core.servers.dispatcher.get_server("tasks")
            for i in range(repeats):
                for name, server in (("same", own), ("other", other)):
                    wake, trip = await _wake(
                        core,
                        starts,
                        lambda a, s=server: s.call_tool("task_update", a),
                        f"{name}{i}",
                    )
                    times[name].append(wake)
                    times[f"{name}_rt"].append(trip)
            times["cpu"] = await _idle_cpu(settings.size(IDLE_SECONDS, SMOKE_IDLE_SECONDS))
        finally:
            await core.watch.stop()
            await other.aclose()
    return times


async def _idle_cpu(idle: float) -> list[float]:
    """Percent of one core used while the watch waits: [this process, its task servers]."""
    me = psutil.Process()
    servers = me.children(recursive=True)

    def cpu(procs: list[psutil.Process]) -> float:
        return sum(sum(p.cpu_times()[:2]) for p in procs if p.is_running())

    before, began = [cpu([me]), cpu(servers)], time.perf_counter()
    await asyncio.sleep(idle)
    seconds = time.perf_counter() - began
    return [100 * (cpu(procs) - b) / seconds for procs, b in zip(([me], servers), before)]


async def _chain_pair(settings: Settings, db: str, tag: str) -> tuple[float, float]:
    """(watch on, direct) seconds for a chain (20 steps at full size), each on a fresh plan."""
    chain = settings.size(CHAIN, SMOKE_CHAIN)
    core = AgentCore(OfflineBackend(), agent=_agent(db), workdir=settings.scratch, autosave=False)
    async with core:
        await core.submit(_plan_prompt(chain, f"w{tag}"))
        began = time.perf_counter()
        await core.watch.start()
        await core.watch.until_idle(timeout=120)
        watched = time.perf_counter() - began
        await core.watch.stop()
        await core.submit(_plan_prompt(chain, f"d{tag}"))
        record = core.plans[-1]
        began = time.perf_counter()
        for index in range(chain):
            await core.submit(step_prompt(record.steps, index, record.ids, kind="tasks"))
        direct = time.perf_counter() - began
    return watched, direct


async def run(settings: Settings) -> list[Figure]:
    """Wake latencies against the update round trip, idle CPU, and the chain ratio."""
    db = str(settings.scratch / "watch-tasks.db")
    times = await _wake_rows(settings, db)
    pairs = [await _chain_pair(settings, db, str(i)) for i in range(settings.repeats(5, 1))]
    watched, direct = [p[0] for p in pairs], [p[1] for p in pairs]
    chain = settings.size(CHAIN, SMOKE_CHAIN)
    idle = settings.size(IDLE_SECONDS, SMOKE_IDLE_SECONDS)
    return [
        _latency("same task-server process", times["same"], times["same_rt"], 20),
        _latency("another process, same SQLite db", times["other"], times["other_rt"], 150),
        Figure(
            what="idle CPU of the watching agent's process",
            unit="%",
            ours=times["cpu"][0],
            goal="< 1% of a core",
            met=times["cpu"][0] < 1.0,
            samples=1,
            note=(
                f"{idle:g} s idle, subscribed; the two task-server processes used "
                f"{times['cpu'][1]:.2f}% more (their own cross-process check of the db file)"
            ),
        ),
        Figure(
            what=f"{chain}-step chain, watch on, no user action",
            unit="s",
            ours=median(watched),
            baseline=median(direct),
            baseline_what=f"{chain} step prompts submitted one after another",
            max_ratio=1.3,
            samples=len(pairs),
            paired=paired_ratio(watched, direct),
        ),
    ]


def _latency(where: str, wake: list[float], trip: list[float], goal_ms: float) -> Figure:
    ours = median(wake) * 1000
    return Figure(
        what=f"wake latency, update via {where}",
        unit="ms",
        ours=ours,
        baseline=median(trip) * 1000,
        baseline_what="the task_update's MCP round trip",
        goal=f"< {goal_ms:g} ms",
        met=ours < goal_ms,
        samples=len(wake),
    )


ROW = Row("watch", "Reactive agent: wake latency and the watched chain", run)
