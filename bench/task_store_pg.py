"""The task store on PostgreSQL beside SQLite: create throughput, `ready`, wake-ups.

A throwaway PostgreSQL cluster is started for the row (the tests' own helper,
tests/support/pg_cluster.py). Throughput: task_create through MCP on PostgreSQL and on
SQLite, and a plain psycopg INSERT (one transaction each, the store's schema), side by
side. `ready` on 10,000 tasks (1000 plans of a goal and 9 chained steps, 600 finished, 800 ready),
loaded by one bulk insert and then ANALYZEd, as autovacuum would. Cross-process wake: a task_create through one server process
until a subscriber of another server process gets the `tasks://events` signal. Idle CPU:
a server process doing nothing for a while, with and without its SQLite watch.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import psycopg
from mcp import Client

from bench._report import Figure
from bench._run import Mode, Row, Settings, alternate, median, paired_ratio
from bench._servers import first_text, task_server_args, task_server_params
from ollie_nb.tasks import open_store

READY_GOAL_MS = 20.0
WAKE_GOAL_MS = 50.0
PLANS, PLAN_STEPS, FINISHED = 1000, 9, 600
SMOKE_PLANS = 10  # of which 6 finished, as 600 of 1000
CLUSTER_HELPER = Path(__file__).parents[1] / "tests" / "support" / "pg_cluster.py"


def cluster_module() -> Any:
    spec = importlib.util.spec_from_file_location("pg_cluster", CLUSTER_HELPER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _bulk_plans(conn: Any, plans: int) -> None:
    """The store row's store (10,000 tasks, 800 ready at full size), in one transaction of raw rows."""
    rows, deps = [], []
    finished_plans = plans * FINISHED // PLANS
    for plan in range(plans):
        goal = f"t-g{plan:04d}"
        goal_status = "done" if plan < finished_plans else "open"  # closed with its last step
        rows.append((goal, f"Goal {plan}: ship report {plan}", goal_status, None))
        previous = None
        for step in range(PLAN_STEPS):
            tid = f"t-s{plan:04d}{step}"
            finished = plan < finished_plans or step < plan % PLAN_STEPS
            rows.append(
                (tid, f"Step {step + 1} of goal {plan}", "done" if finished else "open", goal)
            )
            if previous:
                deps.append((tid, previous))
            previous = tid
    stamp = "2025-01-01T00:00:00.000Z"
    conn.executemany(
        "INSERT INTO tasks (id, title, status, parent, created_at, updated_at) "
        f"VALUES (?, ?, ?, ?, '{stamp}', '{stamp}')",
        rows,
    )
    conn.executemany("INSERT INTO deps (task, blocker) VALUES (?, ?)", deps)


async def _create_batch(client: Client, n: int, counter: Any) -> None:
    for _ in range(n):
        i = next(counter)
        result = await client.call_tool("task_create", {"title": f"Task {i}", "body": f"D {i}."})
        if result.is_error:
            raise RuntimeError(f"task_create failed: {first_text(result)}")


async def _throughput(settings: Settings, url: str, raw_url: str, tmp: Path) -> list[Figure]:
    batches, batch = settings.repeats(11, 3), settings.size(50, 5)
    counter = iter(range(10**9))
    open_store(raw_url).close()  # the store's schema for the raw inserts
    raw = psycopg.connect(raw_url, autocommit=True)
    sql = "INSERT INTO tasks (id, title, body, created_at, updated_at) VALUES (%s, %s, %s, %s, %s)"

    async def raw_batch() -> None:
        for _ in range(batch):
            i = next(counter)
            now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
            raw.execute(sql, (f"t-r{i}", f"Task {i}", f"D {i}.", now, now))

    try:
        async with (
            Client(task_server_params(url)) as pg,
            Client(task_server_params(tmp / "mcp.db")) as lite,
        ):
            await _create_batch(pg, batch, counter)  # warm-up
            await _create_batch(lite, batch, counter)
            times = await alternate(
                {
                    "pg": lambda: _create_batch(pg, batch, counter),
                    "sqlite": lambda: _create_batch(lite, batch, counter),
                    "raw": raw_batch,
                },
                batches,
            )
    finally:
        raw.close()
    rate = {k: batch / median(v) for k, v in times.items()}
    return [
        Figure(
            what="task_create via MCP on PostgreSQL, sequential",
            unit="/s",
            ours=rate["pg"],
            baseline=rate["raw"],
            baseline_what="psycopg INSERT, one transaction each, same schema",
            samples=batches,
            paired=paired_ratio(times["pg"], times["raw"]),
        ),
        Figure(
            what="task_create via MCP on SQLite (same run)",
            unit="/s",
            ours=rate["sqlite"],
            baseline=rate["pg"],
            baseline_what="task_create via MCP on PostgreSQL",
            samples=batches,
            paired=paired_ratio(times["sqlite"], times["pg"]),
        ),
    ]


async def _ready(settings: Settings, url: str, tmp: Path) -> list[Figure]:
    repeats = settings.repeats(31, 7)
    lite_path = tmp / "ready.db"
    plans = settings.size(PLANS, SMOKE_PLANS)
    ready = 2 * (plans - plans * FINISHED // PLANS)
    stores = {"pg": open_store(url), "sqlite": open_store(lite_path)}
    try:
        for store in stores.values():
            store._run(lambda conn: _bulk_plans(conn, plans), write=True)
            if len(store.ready()) != ready:
                raise RuntimeError("the ready set is not the expected one")
        # What autovacuum does soon after a bulk load: planner statistics for the new rows.
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ANALYZE")
        async with Client(task_server_params(url)) as client:

            async def listing() -> None:
                result = await client.call_tool("task_list", {"status": "ready"})
                if result.is_error:
                    raise RuntimeError(f"task_list failed: {first_text(result)}")

            await listing()
            times = await alternate(
                {
                    "pg": _sync(stores["pg"].ready),
                    "sqlite": _sync(stores["sqlite"].ready),
                    "mcp": listing,
                },
                repeats,
            )
    finally:
        for store in stores.values():
            store.close()
    ms = {k: median(v) * 1000 for k, v in times.items()}
    goal = f"< {READY_GOAL_MS:g} ms"
    total = plans * (PLAN_STEPS + 1)
    return [
        Figure(
            what=f"ready, {total:,} tasks: PostgreSQL store",
            unit="ms",
            ours=ms["pg"],
            baseline=ms["sqlite"],
            baseline_what="the SQLite store's ready on the same tasks",
            goal=goal,
            met=ms["pg"] < READY_GOAL_MS,
            samples=repeats,
            paired=paired_ratio(times["pg"], times["sqlite"]),
        ),
        Figure(
            what=f"ready, {total:,} tasks: task_list via MCP on PostgreSQL",
            unit="ms",
            ours=ms["mcp"],
            baseline=ms["pg"],
            baseline_what="the PostgreSQL store's ready in process",
            goal=goal,
            met=ms["mcp"] < READY_GOAL_MS,
            samples=repeats,
            paired=paired_ratio(times["mcp"], times["pg"]),
        ),
    ]


def _sync(fn: Callable[[], Any]) -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        fn()

    return call


async def _wake_ms(db: str | Path, repeats: int) -> list[float]:
    """Milliseconds from a task_create on one server to the signal at another's subscriber."""
    samples: list[float] = []
    async with (
        Client(task_server_params(db)) as writer,
        Client(task_server_params(db)) as watcher,
        watcher.listen(resource_subscriptions=["tasks://events"]) as sub,
    ):
        for i in range(repeats + 1):
            began = time.perf_counter()
            await writer.call_tool("task_create", {"title": f"wake {i}"})
            with anyio.fail_after(10):
                await sub.__anext__()
            if i:  # the first is a warm-up
                samples.append((time.perf_counter() - began) * 1000)
            await anyio.sleep(0.03)
    return samples


async def _wake(settings: Settings, url: str, tmp: Path) -> list[Figure]:
    repeats = settings.repeats(41, 9)
    pg, lite = await _wake_ms(url, repeats), await _wake_ms(tmp / "wake.db", repeats)
    return [
        Figure(
            what="cross-process wake on PostgreSQL (LISTEN/NOTIFY)",
            unit="ms",
            ours=median(pg),
            baseline=median(lite),
            baseline_what="the same on SQLite (PRAGMA data_version every 25 ms)",
            goal=f"< {WAKE_GOAL_MS:g} ms",
            met=median(pg) < WAKE_GOAL_MS,
            samples=repeats,
            note="from task_create on server A to the signal at server B's subscriber",
        )
    ]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _idle_cpu_ms_per_s(db: Path, settle: float, seconds: float, *extra: str) -> float:
    proc = subprocess.Popen(
        [sys.executable, *task_server_args(db), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        await anyio.sleep(settle)  # past the imports and the start
        before = _cpu_seconds(proc.pid)
        await anyio.sleep(seconds)
        return (_cpu_seconds(proc.pid) - before) * 1000 / seconds
    finally:
        proc.kill()
        proc.wait(10)


async def _idle(settings: Settings, tmp: Path) -> list[Figure]:
    seconds = {Mode.FULL: 10.0, Mode.QUICK: 3.0, Mode.SMOKE: 0.2}[settings.mode]
    settle = settings.size(3.0, 0.2)
    db = tmp / "idle.db"
    open_store(db).close()
    watching = await _idle_cpu_ms_per_s(db, settle, seconds)
    still = await _idle_cpu_ms_per_s(db, settle, seconds, "--watch-interval", "0")
    return [
        Figure(
            what="idle SQLite server: CPU ms per second, watch every 25 ms",
            unit="ms",
            ours=watching,
            baseline=still,
            baseline_what="the same server with --watch-interval 0 (no watch)",
            samples=1,
            note=f"utime+stime from /proc over {seconds:g} s",
        )
    ]


async def run(settings: Settings) -> list[Figure]:
    """Start a cluster, then throughput, ready, wake-ups and idle CPU, each on fresh databases."""
    helper = cluster_module()
    bin_dir = helper.find_bin_dir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)")
    cluster = helper.start_cluster(bin_dir)
    try:
        with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
            path = Path(tmp)
            return [
                *await _throughput(settings, cluster.new_database(), cluster.new_database(), path),
                *await _ready(settings, cluster.new_database(), path),
                *await _wake(settings, cluster.new_database(), path),
                *await _idle(settings, path),
            ]
    finally:
        cluster.stop()


ROW = Row("store_pg", "Task store on PostgreSQL", run, needs_postgres=True)
