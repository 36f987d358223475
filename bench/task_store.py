"""The task store: task_create throughput and `ready` on 10,000 tasks.

Throughput is timed in batches, interleaved: creates through MCP (SDK client, one stdio
session, one call after another), TaskStore.create in process, and plain sqlite3 inserts
into a database with the store's own schema (made by opening a TaskStore), each insert
its own transaction as a create is. `ready` runs on a store of 1000 plans (a goal and 9
chained steps each), 600 of them finished (their goals closed with their last step)
and the rest part-way, made through the store's API.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client

from bench._report import Figure
from bench._run import Row, Settings, alternate, median, paired_ratio
from bench._servers import first_text, task_server_params
from ollie_nb.tasks import TaskStore

READY_GOAL_MS = 20.0
PLANS, PLAN_STEPS, FINISHED = 1000, 9, 600
SMOKE_PLANS = 10  # of which 6 finished, as 600 of 1000
READY_IDS_SQL = (
    "SELECT t.id FROM tasks t WHERE t.status = 'open' AND NOT EXISTS ("
    "SELECT 1 FROM deps d JOIN tasks b ON b.id = d.blocker "
    "WHERE d.task = t.id AND b.status <> 'done') ORDER BY t.rowid"
)
INSERT_SQL = (
    "INSERT INTO tasks (id, title, body, status, parent, assignee, created_at, updated_at) "
    "VALUES (?, ?, ?, 'open', NULL, '', ?, ?)"
)


def fill_store(store: TaskStore, plans: int = PLANS) -> int:
    """Make the store (10,000 tasks at full size); return how many tasks are ready.

    Each plan is created whole before any step is marked done, as an agent saves a plan.
    """
    finished = plans * FINISHED // PLANS
    for plan in range(plans):
        goal = store.create(f"Goal {plan}: ship report {plan}", "Plan of 9 steps.")
        steps: list[str] = []
        for step in range(PLAN_STEPS):
            steps.append(
                store.create(
                    f"Step {step + 1} of goal {plan}",
                    "Do the step and check it.",
                    parent=goal,
                    blockers=steps[-1:],
                )
            )
        for step, task_id in enumerate(steps):
            if plan < finished or step < plan % PLAN_STEPS:
                store.update(task_id, "done")
    # A finished plan's goal closed with its last step: the goal and the next step of each
    # unfinished plan are ready.
    return 2 * (plans - finished)


def _raw_connection(path: Path) -> sqlite3.Connection:
    TaskStore(path).close()  # the store's own schema and journal mode
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _rate(samples: list[float], per_batch: int) -> float:
    return per_batch / median(samples)


async def _throughput(settings: Settings, tmp: Path) -> list[Figure]:
    batches = settings.repeats(15, 3)
    mcp_batch, local_batch = settings.size(50, 5), settings.size(200, 20)
    store = TaskStore(tmp / "store.db")
    conn = _raw_connection(tmp / "raw.db")
    counter = iter(range(10**9))

    def args() -> dict[str, Any]:
        n = next(counter)
        return {"title": f"Task {n}: check region {n}", "body": f"Details of task {n}."}

    def store_batch() -> None:
        for _ in range(local_batch):
            store.create(**args())

    def raw_batch() -> None:
        for _ in range(local_batch):
            a = args()
            now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
            conn.execute(INSERT_SQL, (f"t-{next(counter)}", a["title"], a["body"], now, now))

    try:
        async with Client(task_server_params(tmp / "mcp.db")) as client:

            async def mcp_batch_run() -> None:
                for _ in range(mcp_batch):
                    result = await client.call_tool("task_create", args())
                    if result.is_error:
                        raise RuntimeError(f"task_create failed: {first_text(result)}")

            await mcp_batch_run()  # warm-up
            times = await alternate(
                {"mcp": mcp_batch_run, "store": _sync(store_batch), "raw": _sync(raw_batch)},
                batches,
            )
    finally:
        store.close()
        conn.close()
    raw_rate = _rate(times["raw"], local_batch)
    baseline = "sqlite3 INSERT, one transaction each, same schema"
    return [
        Figure(
            what="task_create via MCP, sequential",
            unit="/s",
            ours=_rate(times["mcp"], mcp_batch),
            baseline=raw_rate,
            baseline_what=baseline,
            samples=batches,
            paired=paired_ratio(
                [t / mcp_batch for t in times["mcp"]], [t / local_batch for t in times["raw"]]
            ),
        ),
        Figure(
            what="TaskStore.create in process",
            unit="/s",
            ours=_rate(times["store"], local_batch),
            baseline=raw_rate,
            baseline_what=baseline,
            samples=batches,
            paired=paired_ratio(times["store"], times["raw"]),
        ),
    ]


def _sync(fn: Callable[[], None]) -> Callable[[], Any]:
    async def call() -> None:
        fn()

    return call


async def _ready(settings: Settings, tmp: Path) -> list[Figure]:
    repeats = settings.repeats(31, 7)
    path = tmp / "ready.db"
    with TaskStore(path) as store:
        expected = fill_store(store, settings.size(PLANS, SMOKE_PLANS))
        total = len(store.list("all"))
    conn = sqlite3.connect(path)
    store = TaskStore(path)
    try:
        if (
            len(store.ready()) != expected
            or len(conn.execute(READY_IDS_SQL).fetchall()) != expected
        ):
            raise RuntimeError("the ready set is not the expected one")
        async with Client(task_server_params(path)) as client:

            async def listing() -> None:
                result = await client.call_tool("task_list", {"status": "ready"})
                if result.is_error:
                    raise RuntimeError(f"task_list failed: {first_text(result)}")

            await listing()  # warm-up
            times = await alternate(
                {
                    "store": _sync(store.ready),
                    "sql": _sync(lambda: conn.execute(READY_IDS_SQL).fetchall()),
                    "mcp": listing,
                },
                repeats,
            )
    finally:
        store.close()
        conn.close()
    in_store = median(times["store"]) * 1000
    over_mcp = median(times["mcp"]) * 1000
    goal = f"< {READY_GOAL_MS:g} ms"
    return [
        Figure(
            what=f"ready, {total:,} tasks: TaskStore.ready",
            unit="ms",
            ours=in_store,
            baseline=median(times["sql"]) * 1000,
            baseline_what=f"sqlite3 query of the ready ids alone ({expected:,} of them)",
            goal=goal,
            met=in_store < READY_GOAL_MS,
            samples=repeats,
            paired=paired_ratio(times["store"], times["sql"]),
        ),
        Figure(
            what=f"ready, {total:,} tasks: task_list via MCP",
            unit="ms",
            ours=over_mcp,
            baseline=in_store,
            baseline_what="TaskStore.ready in process; ours is task_list(status='ready'), at most 500 lines",
            goal=goal,
            met=over_mcp < READY_GOAL_MS,
            samples=repeats,
            paired=paired_ratio(times["mcp"], times["store"]),
        ),
    ]


async def run(settings: Settings) -> list[Figure]:
    """Throughput first, then the ready queries, each on its own databases."""
    with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
        return [*await _throughput(settings, Path(tmp)), *await _ready(settings, Path(tmp))]


ROW = Row("store", "Task store", run)
