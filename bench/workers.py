"""Throughput of headless workers sharing one PostgreSQL task store.

N worker processes (bench/worker_proc.py: the `ollie_nb work` worker with the offline
model, each step's work 10 ms) watch one store, each with its own ollie-tasks server. A
plan of 200 independent steps is created blocked by one gate task; closing the gate
makes all 200 ready at once, and the figure is the steps done per second from then to
the last step done (read from the store). 4 workers against 1, in pairs side by side;
the log is checked for every step claimed once and done once.

The note also gives what one step costs in CPU (workers, their ollie-tasks servers and
PostgreSQL's processes, read from /proc while the plan is worked) and so the most the
machine's cores allow: 4 workers cannot do more than `cores / CPU per step` steps/s.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings
from bench.task_store_pg import cluster_module
from ollie_nb.tasks import open_store

STEPS = 200
MANY = 4  # workers, against one
SMOKE_STEPS, SMOKE_MANY = 4, 2
STEP_SECONDS = 0.01
WORKER = Path(__file__).with_name("worker_proc.py")
ROOT = Path(__file__).resolve().parents[1]


def _agent(folder: Path, url: str) -> Path:
    server = {
        "command": sys.executable,
        "args": ["-m", "ollie_nb.tasks", "serve", "--db", url],
        "env": {"PYTHONPATH": str(ROOT)},  # this tree's ollie-tasks (MCP servers get a bare env)
    }
    path = folder / "worker.json"
    path.write_text(json.dumps({"mcpServers": {"tasks": server}, "claimLease": 30}))
    return path


@dataclass(frozen=True)
class Sample:
    rate: float  # steps/s
    cpu: float  # CPU seconds per step, workers + servers + PostgreSQL
    pg_cpu: float = 0.0  # of which PostgreSQL's own processes


def _cpu_seconds(roots: list[int]) -> float:
    """User + system CPU seconds of the processes `roots` and all their descendants."""
    parent: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, wanted = 0.0, set(roots)
    for pid in times:
        p, seen = pid, 0
        while p and p not in wanted and seen < 64:
            p, seen = parent.get(p, 0), seen + 1
        if p in wanted:
            total += times[pid]
    return total


def _postmaster(cluster) -> int:
    return int((cluster.data / "postmaster.pid").read_text().split()[0])


def _throughput(
    url: str,
    folder: Path,
    workers: int,
    steps: int,
    postmaster: int,
    step_seconds: float = STEP_SECONDS,
) -> Sample:
    """Steps per second of `workers` workers on a fresh plan in the store at `url`, each
    step's turn taking `step_seconds` first."""
    with open_store(url) as store:
        gate = store.create("gate")
        goal = store.create(f"{steps} steps for {workers} worker(s)")
        ids = [store.create(f"step {i}", parent=goal, blockers=[gate]) for i in range(steps)]
    agent = _agent(folder, url)
    procs: list[subprocess.Popen[str]] = []
    try:
        for n in range(workers):  # one after the other: a busy machine starts them all
            proc = subprocess.Popen(
                [sys.executable, str(WORKER), str(agent), f"w{n}", str(step_seconds)],
                stdout=subprocess.PIPE,
                text=True,
            )
            procs.append(proc)
            assert proc.stdout is not None
            if proc.stdout.readline() != "ready\n":
                raise RuntimeError("a worker did not start")
        time.sleep(1.0)  # each has read the store once and waits for a change
        roots = [postmaster, *(proc.pid for proc in procs)]
        with open_store(url) as store:
            cpu, pg = _cpu_seconds(roots), _cpu_seconds([postmaster])
            start = time.monotonic()
            store.update(gate, status="done")
            while len(store.list(status="done", parent=goal, edges=False)) < steps:
                time.sleep(0.02)
            seconds = time.monotonic() - start
            cpu, pg = _cpu_seconds(roots) - cpu, _cpu_seconds([postmaster]) - pg
            _check(store, set(ids))
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
    return Sample(steps / seconds, cpu / steps, pg / steps)


def _all_events(store) -> list:
    events, since = [], 0
    while page := store.events(since, 1000):
        events.extend(page)
        since = page[-1].seq
    return events


def _check(store, steps: set[str]) -> None:
    claims: dict[str, int] = {}
    dones: dict[str, int] = {}
    for event in _all_events(store):
        if event.task not in steps:
            continue
        if event.type == "claimed":
            claims[event.task] = claims.get(event.task, 0) + 1
        elif event.type == "status_changed" and event.payload.get("to") == "done":
            dones[event.task] = dones.get(event.task, 0) + 1
    if set(claims.values()) != {1} or set(dones.values()) != {1} or len(dones) != len(steps):
        raise RuntimeError("a step was claimed or done more than once, or not at all")


async def run(settings: Settings) -> list[Figure]:
    helper = cluster_module()
    bin_dir = helper.find_bin_dir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)")
    cluster = helper.start_cluster(bin_dir)
    pairs: list[tuple[Sample, Sample]] = []
    steps, many = settings.size(STEPS, SMOKE_STEPS), settings.size(MANY, SMOKE_MANY)
    try:
        with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
            for _ in range(settings.repeats(3, 1)):
                pm = _postmaster(cluster)
                one = _throughput(cluster.new_database(), Path(tmp), 1, steps, pm)
                four = _throughput(cluster.new_database(), Path(tmp), many, steps, pm)
                pairs.append((one, four))
    finally:
        cluster.stop()
    one_rate = statistics.median(p[0].rate for p in pairs)
    four_rate = statistics.median(p[1].rate for p in pairs)
    times = statistics.median(p[1].rate / p[0].rate for p in pairs)
    cpu_one = statistics.median(p[0].cpu for p in pairs)
    cpu_four = statistics.median(p[1].cpu for p in pairs)
    cores = os.cpu_count() or 1
    bound = cores / cpu_four
    return [
        Figure(
            what=f"{many} workers on PostgreSQL, {steps} steps of {STEP_SECONDS * 1000:g} ms",
            unit="/s",
            ours=four_rate,
            baseline=one_rate,
            baseline_what="one worker",
            goal=">= 3x one worker",
            met=times >= 3,
            samples=len(pairs),
            paired=1 / times,
            note=(
                f"{times:.2f}x (median of pairs); each step claimed and done once (event "
                f"log); CPU per step {cpu_one * 1000:.0f} ms with one worker, "
                f"{cpu_four * 1000:.0f} ms with {many} (workers, servers, PostgreSQL): {cores} "
                f"cores allow at most {bound:.0f}/s = {bound / one_rate:.1f}x one worker"
            ),
        )
    ]


ROW = Row("workers", "Headless workers sharing a PostgreSQL store", run, needs_postgres=True)
