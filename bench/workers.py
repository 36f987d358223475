"""Row 13: throughput of headless workers sharing one PostgreSQL task store.

N worker processes (bench/worker_proc.py: the `ollie_nb work` worker with the offline
model, each step's work 10 ms) watch one store, each with its own ollie-tasks server. A
plan of 200 independent steps is created blocked by one gate task; closing the gate
makes all 200 ready at once, and the figure is the steps done per second from then to
the last step done (read from the store). 4 workers against 1; the log is checked for
every step claimed once and done once.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings
from bench.task_store_pg import cluster_module
from ollie_nb.tasks import open_store

STEPS = 200
STEP_SECONDS = 0.01
WORKER = Path(__file__).with_name("worker_proc.py")


def _agent(folder: Path, url: str) -> Path:
    server = {"command": sys.executable, "args": ["-m", "ollie_nb.tasks", "serve", "--db", url]}
    path = folder / "worker.json"
    path.write_text(json.dumps({"mcpServers": {"tasks": server}, "claimLease": 30}))
    return path


def _throughput(url: str, folder: Path, workers: int) -> float:
    """Steps per second of `workers` workers on a fresh plan in the store at `url`."""
    with open_store(url) as store:
        gate = store.create("gate")
        goal = store.create(f"{STEPS} steps for {workers} worker(s)")
        steps = [store.create(f"step {i}", parent=goal, blockers=[gate]) for i in range(STEPS)]
    agent = _agent(folder, url)
    procs: list[subprocess.Popen[str]] = []
    try:
        for n in range(workers):  # one after the other: a busy machine starts them all
            proc = subprocess.Popen(
                [sys.executable, str(WORKER), str(agent), f"w{n}", str(STEP_SECONDS)],
                stdout=subprocess.PIPE,
                text=True,
            )
            procs.append(proc)
            assert proc.stdout is not None
            if proc.stdout.readline() != "ready\n":
                raise RuntimeError("a worker did not start")
        time.sleep(1.0)  # each has read the store once and waits for a change
        with open_store(url) as store:
            start = time.monotonic()
            store.update(gate, status="done")
            while len(store.list(status="done", parent=goal)) < STEPS:
                time.sleep(0.02)
            seconds = time.monotonic() - start
            _check(store, set(steps))
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
    return STEPS / seconds


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
    try:
        with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
            one = _throughput(cluster.new_database(), Path(tmp), 1)
            four = _throughput(cluster.new_database(), Path(tmp), 4)
    finally:
        cluster.stop()
    return [
        Figure(
            row=13,
            what=f"4 workers on PostgreSQL, {STEPS} steps of {STEP_SECONDS * 1000:g} ms",
            unit="/s",
            ours=four,
            baseline=one,
            baseline_what="one worker",
            goal=">= 3x one worker",
            met=four >= 3 * one,
            samples=1,
            note=f"{four / one:.2f}x; each step claimed and done once (event log)",
        )
    ]


ROW = Row(16, "workers", "Headless workers sharing a PostgreSQL store", run)
