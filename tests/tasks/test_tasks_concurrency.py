"""Several server processes on one database, and a writer killed with SIGKILL mid-run."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from tasks_harness import connect, ok

WRITER = Path(__file__).with_name("tasks_writer.py")


@pytest.mark.anyio
async def test_four_servers_create_1000_distinct_tasks(db: Path) -> None:
    ids: list[list[str]] = [[] for _ in range(4)]
    finished: list[int] = []
    all_finished = anyio.Event()
    listing: list[str] = []

    async def one_server(n: int) -> None:
        async with connect(db) as client:

            async def create(i: int) -> None:
                ids[n].append(await ok(client, "task_create", title=f"server {n} task {i}"))

            async with anyio.create_task_group() as tg:
                for i in range(250):
                    tg.start_soon(create, i)
            finished.append(n)
            if len(finished) == 4:
                all_finished.set()
            await all_finished.wait()
            if n == 0:  # every server sees every task; a long list is cut for the model
                listing.append(await ok(client, "task_list"))

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for n in range(4):
            tg.start_soon(one_server, n)
    elapsed = time.perf_counter() - started

    all_ids = [i for per_server in ids for i in per_server]
    assert [len(per_server) for per_server in ids] == [250] * 4
    assert len(set(all_ids)) == 1000
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (1000,)
        created = conn.execute("SELECT task FROM events WHERE type = 'created'").fetchall()
        assert sorted(t for (t,) in created) == sorted(all_ids)
    conn.close()
    lines = listing[0].splitlines()
    assert len(lines) == 501
    assert lines[-1] == "... 500 more open tasks not shown; narrow the list with parent or label"
    print(f"4 servers x 250 task_create: {elapsed:.2f} s including spawning")


def _kill_writer_midway(db: Path, after: int) -> int:
    """Start a writer, SIGKILL it once it has created `after` tasks; return its last count."""
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        count = 0
        for line in proc.stdout:
            count = int(line)
            if count >= after:
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    return count


def test_sigkill_mid_write_leaves_no_half_created_task(db: Path) -> None:
    db.parent.mkdir(parents=True)
    reported = sum(_kill_writer_midway(db, after) for after in (150, 250, 200))

    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        tasks = {tid for (tid,) in conn.execute("SELECT id FROM tasks")}
        created = {
            task: json.loads(payload)
            for task, payload in conn.execute(
                "SELECT task, payload FROM events WHERE type = 'created'"
            )
        }
        # Every task has its created event and every created event its task (nothing is deleted).
        assert set(created) == tasks
        # Every create the writer reported as done survived the kills.
        assert len(tasks) >= reported
        for task, payload in created.items():
            blockers = {
                b for (b,) in conn.execute("SELECT blocker FROM deps WHERE task = ?", (task,))
            }
            labels = {
                lb for (lb,) in conn.execute("SELECT label FROM labels WHERE task = ?", (task,))
            }
            assert blockers == set(payload["blockers"]), task
            assert labels == set(payload["labels"]), task
        notes = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
        done_events = conn.execute("SELECT count(*) FROM events WHERE type = 'updated'").fetchone()[
            0
        ]
        assert notes == done_events
    finally:
        conn.close()
