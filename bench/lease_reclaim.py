"""A dead worker's step claimed again, against the claim's lease.

A worker process claims a step with a lease of L seconds and renews it every L/4 s; it
is SIGKILLed at a random moment. Another process, polling the ready list every 50 ms,
claims the step once the store counts the lease as over. The figure is the time from
the SIGKILL to that claim, on PostgreSQL (a throwaway cluster, as in the store_pg row) and on
SQLite, held to L + 1 s; each sample checks the log names the dead worker's expiry.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings, median
from bench.task_store_pg import cluster_module
from ollie_nb.tasks import open_store

LEASE = 2.0
SMOKE_LEASE = 0.4
WORKER = Path(__file__).with_name("lease_worker.py")


def _sample(db: str | Path, rescuer: subprocess.Popen[str], lease: float) -> float:
    """Seconds from one worker's SIGKILL to the rescuer's claim of its step."""
    assert rescuer.stdin is not None and rescuer.stdout is not None
    with open_store(db, create=False) as store:
        task_id = store.create("a step whose worker dies")
    doomed = subprocess.Popen(
        [sys.executable, str(WORKER), "hold", str(db), task_id, str(lease)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert doomed.stdout is not None
        if doomed.stdout.readline() != "claimed\n":
            raise RuntimeError("the worker did not claim its step")
        rescuer.stdin.write(task_id + "\n")
        rescuer.stdin.flush()
        time.sleep(random.uniform(0, lease / 2))  # somewhere between two heartbeats
        killed = time.time()
        doomed.send_signal(signal.SIGKILL)
        reclaimed = float(rescuer.stdout.readline())
    finally:
        doomed.kill()
        doomed.wait(10)
    with open_store(db, create=False) as store:
        trail = [(e.type, e.payload) for e in store.events(0, 1000) if e.task == task_id]
    kinds = [kind for kind, _ in trail if kind in ("claimed", "lease_expired")]
    if kinds != ["claimed", "lease_expired", "claimed"] or trail[-1][1]["assignee"] != "rescuer":
        raise RuntimeError(f"unexpected events for {task_id}: {trail}")
    return reclaimed - killed


def _measure(db: str | Path, repeats: int, lease: float, backend: str) -> Figure:
    open_store(db).close()
    rescuer = subprocess.Popen(
        [sys.executable, str(WORKER), "rescue", str(db), str(lease)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert rescuer.stdout is not None
        if rescuer.stdout.readline() != "ready\n":
            raise RuntimeError("the rescuing worker did not start")
        samples = [_sample(db, rescuer, lease) for _ in range(repeats)]
    finally:
        rescuer.kill()
        rescuer.wait(10)
    seconds = median(samples)
    return Figure(
        what=f"worker SIGKILLed to its step claimed again, {backend}",
        unit="s",
        ours=seconds,
        baseline=lease,
        baseline_what="the claim's lease",
        goal=f"<= lease + 1 s ({lease + 1:g} s)",
        met=seconds <= lease + 1,
        samples=repeats,
        note=(
            f"heartbeat every {lease / 4:g} s, killed at a random moment; the other worker "
            f"polls ready every 50 ms; range {min(samples):.2f}-{max(samples):.2f} s"
        ),
    )


async def run(settings: Settings) -> list[Figure]:
    """On PostgreSQL (a fresh cluster) and on SQLite, one rescuer for all the samples."""
    repeats = settings.repeats(9, 3)
    lease = settings.size(LEASE, SMOKE_LEASE)
    helper = cluster_module()
    bin_dir = helper.find_bin_dir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)")
    cluster = helper.start_cluster(bin_dir)
    try:
        with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
            return [
                _measure(cluster.new_database(), repeats, lease, "PostgreSQL"),
                _measure(Path(tmp) / "lease.db", repeats, lease, "SQLite"),
            ]
    finally:
        cluster.stop()


ROW = Row("lease", "Leases: a dead worker's step claimed again", run, needs_postgres=True)
