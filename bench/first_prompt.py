"""AgentCore's first prompt against the bare connect of its task server, and 4 servers.

Each repeat times, in a rotated order: each of 4 task servers connected alone through
the SDK (spawn + initialize), AgentCore start + first `submit` of a list prompt with the
offline demo planner and the first server, connect_tool_servers connecting all 4 at once, and
the SDK connecting all 4 at once; with a short pause before each, so that the server
processes of one step have exited before the next is timed.
"""

from __future__ import annotations

import asyncio
import resource
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp import Client

from bench._report import Figure, usable_cpus
from bench._run import Row, Settings, median, paired_ratio
from bench._servers import task_server_config, task_server_params
from ollie_nb.core import AgentConfig, AgentCore, connect_tool_servers
from ollie_nb.llm import OfflineBackend
from ollie_nb.tasks import TaskStore
from ollie_nb.tools import Dispatcher

SERVERS = 4
SMOKE_SERVERS = 2
SETTLE = 0.25  # seconds between timed steps, for the last step's server processes to exit
CONCURRENT_GOAL = 1.2
LIST_PROMPT = "Ship the report\n- Collect data\n- Clean data\n- Draw charts (after 2)\n- Publish"


async def _raw_connects(dbs: list[Path]) -> float:
    """Connect to every server at once through the SDK; seconds until the last one is ready."""
    start = time.perf_counter()
    ready: list[float] = []
    all_ready, release = asyncio.Event(), asyncio.Event()

    async def one(db: Path) -> None:
        # In the databases' dir: AgentCore starts its servers in its work dir, which it is.
        async with Client(task_server_params(db, cwd=db.parent)):
            ready.append(time.perf_counter() - start)
            if len(ready) == len(dbs):
                all_ready.set()
            await release.wait()

    tasks = [asyncio.create_task(one(db)) for db in dbs]
    waiter = asyncio.create_task(all_ready.wait())
    await asyncio.wait([waiter, *tasks], return_when=asyncio.FIRST_COMPLETED)
    release.set()
    waiter.cancel()
    await asyncio.gather(*tasks)  # a failed connect raises here
    return max(ready)


async def _first_prompt(db: Path, workdir: str) -> float:
    config = AgentConfig.from_dict({"mcpServers": {"tasks": task_server_config(db)}})
    start = time.perf_counter()
    core = AgentCore(OfflineBackend(), agent=config, workdir=workdir, autosave=False)
    try:
        await core.start()
        result = await core.submit(LIST_PROMPT)
        seconds = time.perf_counter() - start
        plan = core.plans[-1] if core.plans else None
        if result.error or plan is None or not plan.persisted:
            raise RuntimeError(f"the first prompt did not persist a plan: {result}")
    finally:
        await core.aclose()
    return seconds


async def _env(dbs: list[Path], workdir: str) -> float:
    config = AgentConfig.from_dict(
        {"mcpServers": {f"tasks{i}": task_server_config(db) for i, db in enumerate(dbs)}}
    )
    start = time.perf_counter()
    env = await connect_tool_servers(config, Dispatcher(), workdir)
    seconds = time.perf_counter() - start
    await env.aclose()
    failed = [s.detail for s in env.statuses.values() if s.state == "failed"]
    if failed:
        raise RuntimeError(f"connect_tool_servers could not connect: {failed[0]}")
    return seconds


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def run(settings: Settings) -> list[Figure]:
    """Time the first prompt and the concurrent connects, a fresh work dir per repeat."""
    repeats = settings.repeats(7, 1)
    servers = settings.size(SERVERS, SMOKE_SERVERS)
    samples: dict[str, list[float]] = {k: [] for k in ("single", "slowest", "first", "env", "raw")}
    cpu: list[float] = []
    for r in range(repeats):
        with tempfile.TemporaryDirectory(dir=settings.scratch) as workdir:
            dbs = [Path(workdir) / f"tasks{i}.db" for i in range(servers)]
            for db in dbs:
                TaskStore(db).close()  # schema made now, so no timed connect pays for it
            if r == 0 and not settings.smoke:
                await _raw_connects(dbs[:1])  # warm the file cache

            async def singles(dbs: list[Path] = dbs) -> None:
                seconds = []
                for db in dbs:
                    before = _children_cpu()
                    seconds.append(await _raw_connects([db]))
                    cpu.append(_children_cpu() - before)
                samples["single"].append(median(seconds))
                samples["slowest"].append(max(seconds))

            async def first(dbs: list[Path] = dbs, workdir: str = workdir) -> None:
                samples["first"].append(await _first_prompt(dbs[0], workdir))

            async def env(dbs: list[Path] = dbs, workdir: str = workdir) -> None:
                samples["env"].append(await _env(dbs, workdir))

            async def raw(dbs: list[Path] = dbs) -> None:
                samples["raw"].append(await _raw_connects(dbs))

            steps: list[Callable[[], Awaitable[None]]] = [singles, first, env, raw]
            for k in range(len(steps)):
                await asyncio.sleep(SETTLE)
                await steps[(r + k) % len(steps)]()

    cores = usable_cpus()
    server_cpu = median(cpu)
    cpu_floor = servers * server_cpu / cores
    env_s, slowest, raw_s = (
        median(samples["env"]),
        median(samples["slowest"]),
        median(samples["raw"]),
    )
    return [
        Figure(
            what="first prompt: AgentCore start + submit",
            unit="s",
            ours=median(samples["first"]),
            baseline=median(samples["single"]),
            baseline_what=f"SDK Client spawn + initialize of one such task server (median of {servers})",
            samples=repeats,
            paired=paired_ratio(samples["first"], samples["single"]),
            note="offline demo planner; the prompt is a goal and 4 steps, saved as 5 tasks",
        ),
        Figure(
            what=f"{servers} at once: connect_tool_servers",
            unit="s",
            ours=env_s,
            baseline=slowest,
            baseline_what=f"slowest of the {servers} servers connected alone (SDK)",
            max_ratio=CONCURRENT_GOAL,
            samples=repeats,
            paired=paired_ratio(samples["env"], samples["slowest"]),
            note=(
                f"one server process uses {server_cpu:.2f} s CPU from spawn to exit, mostly "
                f"importing the MCP SDK: {servers} of them are {cpu_floor:.2f} s per core "
                f"on {cores} cores"
            ),
        ),
        Figure(
            what=f"{servers} at once: connect_tool_servers vs SDK",
            unit="s",
            ours=env_s,
            baseline=raw_s,
            baseline_what=f"SDK Clients entering all {servers} at once",
            samples=repeats,
            paired=paired_ratio(samples["env"], samples["raw"]),
        ),
    ]


ROW = Row("first-prompt", "First prompt latency", run)
