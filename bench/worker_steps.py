"""What a headless worker's step costs, and 4 workers on steps that wait as a model call does.

The workers of row 16 (bench/worker_proc.py, one ollie-tasks server each, PostgreSQL):
- one worker works 200 steps of 10 ms; the CPU of the worker and its server per step is
  the figure (goal <= 10 ms), PostgreSQL's own CPU per step printed beside it (read from
  /proc for the postmaster's tree);
- 4 workers against one on 40 steps that each wait 0.5 s (a real model call's wait), in
  pairs side by side: goal >= 3.6x one worker.
Each run's event log is checked: every step claimed once and done once.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings
from bench.task_store_pg import cluster_module
from bench.workers import STEP_SECONDS, Sample, _postmaster, _throughput

CPU_STEPS, SMOKE_CPU_STEPS = 200, 4
WAIT_STEPS, SMOKE_WAIT_STEPS = 40, 4
WAIT_SECONDS, SMOKE_WAIT_SECONDS = 0.5, 0.05
MANY = 4
CPU_GOAL_MS = 10.0
SPEEDUP_GOAL = 3.6


async def run(settings: Settings) -> list[Figure]:
    helper = cluster_module()
    bin_dir = helper.find_bin_dir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)")
    cluster = helper.start_cluster(bin_dir)
    cpu_steps = settings.size(CPU_STEPS, SMOKE_CPU_STEPS)
    wait_steps = settings.size(WAIT_STEPS, SMOKE_WAIT_STEPS)
    wait = settings.size(WAIT_SECONDS, SMOKE_WAIT_SECONDS)
    costs: list[Sample] = []
    pairs: list[tuple[Sample, Sample]] = []
    try:
        with tempfile.TemporaryDirectory(dir=settings.scratch) as tmp:
            for _ in range(settings.repeats(3, 1)):
                pm = _postmaster(cluster)
                costs.append(_throughput(cluster.new_database(), Path(tmp), 1, cpu_steps, pm))
                one = _throughput(cluster.new_database(), Path(tmp), 1, wait_steps, pm, wait)
                many = _throughput(cluster.new_database(), Path(tmp), MANY, wait_steps, pm, wait)
                pairs.append((one, many))
    finally:
        cluster.stop()
    return [_cpu_figure(costs, cpu_steps), _speedup_figure(pairs, wait_steps, wait)]


def _cpu_figure(costs: list[Sample], steps: int) -> Figure:
    """Worker + ollie-tasks CPU per step, PostgreSQL's own beside it."""
    ours = statistics.median((c.cpu - c.pg_cpu) * 1000 for c in costs)
    pg = statistics.median(c.pg_cpu * 1000 for c in costs)
    return Figure(
        what=f"worker + ollie-tasks CPU per step (one worker, {steps} steps of "
        f"{STEP_SECONDS * 1000:g} ms)",
        unit="ms",
        ours=ours,
        goal=f"<= {CPU_GOAL_MS:g} ms",
        met=ours <= CPU_GOAL_MS,
        samples=len(costs),
        note=f"PostgreSQL's own CPU per step {pg:.1f} ms (not in the figure); "
        f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
    )


def _speedup_figure(pairs: list[tuple[Sample, Sample]], steps: int, wait: float) -> Figure:
    """MANY workers against one on steps that wait `wait` s, in pairs."""
    times = statistics.median(p[1].rate / p[0].rate for p in pairs)
    return Figure(
        what=f"{MANY} workers on PostgreSQL, {steps} steps waiting {wait * 1000:g} ms",
        unit="/s",
        ours=statistics.median(p[1].rate for p in pairs),
        baseline=statistics.median(p[0].rate for p in pairs),
        baseline_what="one worker",
        goal=f">= {SPEEDUP_GOAL:g}x one worker",
        met=times >= SPEEDUP_GOAL,
        samples=len(pairs),
        paired=1 / times,
        note=f"{times:.2f}x (median of pairs); each step claimed and done once (event log)",
    )


ROW = Row(
    "worker-steps",
    "A headless worker's step: its CPU, and 4 workers on waiting steps",
    run,
    needs_postgres=True,
)
