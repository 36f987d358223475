"""Sub-agents working a plan's independent steps in parallel.

Eight independent steps, each doing one second of work through an MCP tool (a test
server's `sleep`), worked by `run_plan(parallel=4)`: held to the ideal of two seconds,
beside the same steps worked one after another. A diamond (1 -> 4 -> 1) against its
ideal of three seconds. The cost of spawning a child (spawn to its first model
request) and the memory an idle child keeps (tracemalloc).
"""

from __future__ import annotations

import asyncio
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, median
from bench._servers import task_server_config
from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, step_prompt_task_id
from ollie_nb.planning import step_prompt

SLEEP_SERVER = Path(__file__).with_name("sleep_server.py")
WORK = 1.0  # seconds of each step
SMOKE_WORK = 0.02
WIDE = "Eight chores\n" + "\n".join(f"- chore {i} (independent)" for i in range(1, 9))
DIAMOND = "Diamond\n- top\n- a (after 1)\n- b (after 1)\n- c (after 1)\n- d (after 1)\n- end (after 2, 3, 4, 5)"
SPAWNS = 200
SMOKE_SPAWNS = 8


def _agent(db: Path) -> AgentConfig:
    servers = {
        "tasks": task_server_config(db),
        "work": {"command": sys.executable, "args": [str(SLEEP_SERVER)]},
    }
    return AgentConfig.from_dict({"mcpServers": servers, "trustedTools": ["task_*", "sleep"]})


def step_worker(work: float) -> Callable[[list[Any], list[Any]], Any]:
    """An offline model whose step sleeps `work` s through the MCP tool, marks its task done, answers."""

    def reply(messages: list[Any], tools: list[Any]) -> Any:
        last = messages[-1]
        if last.role == "user":
            task = step_prompt_task_id(last.content)
            if task is None:  # the plan request: the demo planner makes the plan
                return demo_reply(messages, tools)
            return [{"name": "sleep", "arguments": {"seconds": work}}]
        if last.role == "tool" and last.name == "sleep":
            prompt = next(m.content for m in reversed(messages) if m.role == "user")
            task_id = step_prompt_task_id(prompt)
            return [{"name": "task_update", "arguments": {"id": task_id, "status": "done"}}]
        return "done"

    return reply


async def _timed_plans(settings: Settings, repeat: int) -> dict[str, float]:
    """One repeat: 8 steps with 4 children, the same 8 sequentially, the diamond with 4 children."""
    core = AgentCore(
        OfflineBackend(step_worker(settings.size(WORK, SMOKE_WORK))),
        agent=_agent(settings.scratch / f"fanout-{repeat}.db"),
        workdir=settings.scratch,
        autosave=False,
        execute=False,
    )
    times: dict[str, float] = {}
    async with core:
        for key, prompt in (("wide", WIDE), ("diamond", DIAMOND)):
            await core.submit(prompt)
            began = time.perf_counter()
            run = await core.runs.run_plan(parallel=4)
            times[key] = time.perf_counter() - began
            if run.failed or len(run.outcome) != len(core.plans[-1].ids):
                raise RuntimeError(f"the {key} run did not finish: {run.summary}")
        await core.submit(WIDE)
        record = core.plans[-1]
        began = time.perf_counter()
        for index in range(len(record.ids)):
            await core.submit(step_prompt(record.steps, index, record.ids, kind="tasks"))
        times["sequential"] = time.perf_counter() - began
    return times


async def _spawn_and_memory(settings: Settings) -> tuple[list[float], float]:
    """Seconds from spawn to the child's first model request; bytes kept per idle child."""
    first_request: dict[str, float] = {}

    def reply(messages: list[Any], tools: list[Any]) -> str:
        name = messages[0].content.rsplit("You are sub-agent '", 1)[-1].split("'", 1)[0]
        first_request.setdefault(name, time.perf_counter())
        return "ok"

    core = AgentCore(OfflineBackend(reply), workdir=settings.scratch, autosave=False, execute=False)
    spawns = settings.size(SPAWNS, SMOKE_SPAWNS)
    core.max_parallel = spawns
    delays = []
    async with core:
        for i in range(settings.repeats(spawns // 2, 20)):
            began = time.perf_counter()
            child = core.subagents.spawn(f"s{i}", "say ok")
            await child.until_idle()
            delays.append(first_request[child.name] - began)
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        children = [core.subagents.spawn(f"m{i}", "say ok") for i in range(spawns // 2)]
        await asyncio.gather(*(c.until_idle() for c in children))
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    return delays, grown / len(children)


async def run(settings: Settings) -> list[Figure]:
    """Parallel against ideal and sequential; spawn cost; memory per idle child."""
    rounds = [await _timed_plans(settings, r) for r in range(settings.repeats(3, 1))]
    wide = [r["wide"] for r in rounds]
    diamond = [r["diamond"] for r in rounds]
    sequential = [r["sequential"] for r in rounds]
    delays, per_child = await _spawn_and_memory(settings)
    work = settings.size(WORK, SMOKE_WORK)
    ideal_wide, ideal_diamond = 8 * work / 4, 3 * work
    return [
        Figure(
            what=f"8 independent {work:g} s steps, 4 sub-agents",
            unit="s",
            ours=median(wide),
            baseline=ideal_wide,
            baseline_what="the ideal: 2 steps' time",
            max_ratio=1.15,
            samples=len(wide),
            note=f"the same 8 steps one after another: {median(sequential):.2f} s",
        ),
        Figure(
            what=f"8 independent {work:g} s steps, one after another",
            unit="s",
            ours=median(sequential),
            baseline=8 * work,
            baseline_what="the ideal: 8 steps' time",
            samples=len(sequential),
        ),
        Figure(
            what=f"diamond 1 -> 4 -> 1 of {work:g} s steps, 4 sub-agents",
            unit="s",
            ours=median(diamond),
            baseline=ideal_diamond,
            baseline_what="the ideal: 3 layers' time",
            max_ratio=1.15,
            samples=len(diamond),
        ),
        Figure(
            what="spawn a sub-agent: spawn to its first model request",
            unit="ms",
            ours=median(delays) * 1000,
            goal="< 5 ms",
            met=median(delays) < 0.005,
            samples=len(delays),
        ),
        Figure(
            what="memory per idle sub-agent (after one short turn)",
            unit="B",
            ours=per_child,
            goal="< 200 KB",
            met=per_child < 200_000,
            samples=settings.size(SPAWNS, SMOKE_SPAWNS) // 2,
        ),
    ]


ROW = Row("fanout", "Sub-agents: a plan's independent steps in parallel", run)
