"""Several server processes on one database, and a writer killed with SIGKILL mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from ollie_nb.tasks import SCHEMA_VERSION, open_store
from tests.support.agents import FIXTURES
from tests.support.tasks_harness import connect, ok

WRITER = FIXTURES / "tasks_writer.py"
CLAIMER = FIXTURES / "tasks_claimer.py"
EVENT_WRITER = FIXTURES / "tasks_event_writer.py"


@pytest.mark.slow
@pytest.mark.anyio
async def test_four_servers_create_1000_distinct_tasks(any_db: str | Path) -> None:
    db = any_db
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
    assert query(db, "SELECT count(*) FROM tasks") == [(1000,)]
    created = query(db, "SELECT task FROM events WHERE type = 'created'")
    assert sorted(t for (t,) in created) == sorted(all_ids)
    lines = listing[0].splitlines()
    assert len(lines) == 501
    assert lines[-1] == "... 500 more open tasks not shown; narrow the list with parent or label"
    print(f"4 servers x 250 task_create: {elapsed:.2f} s including spawning")


def query(db: str | Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one raw SQL query (`?` placeholders) on either backend."""
    with open_store(db, create=False) as store:
        return [
            tuple(r) for r in store._run(lambda c: c.execute(sql, params).fetchall(), write=False)
        ]


def _kill_writer_midway(db: str | Path, after: int) -> int:
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


@pytest.mark.slow
def test_sigkill_mid_write_leaves_no_half_created_task(any_db: str | Path) -> None:
    db = any_db
    open_store(db).close()  # the schema (and the SQLite file) exist before the first kill
    reported = sum(_kill_writer_midway(db, after) for after in (150, 250, 200))

    if isinstance(db, Path):
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        finally:
            conn.close()
    tasks = {tid for (tid,) in query(db, "SELECT id FROM tasks")}
    created = {
        task: json.loads(payload)
        for task, payload in query(db, "SELECT task, payload FROM events WHERE type = 'created'")
    }
    # Every task has its created event and every created event its task (nothing is deleted).
    assert set(created) == tasks
    # Every create the writer reported as done survived the kills.
    assert len(tasks) >= reported
    deps: dict[str, set[str]] = {}
    for task, blocker in query(db, "SELECT task, blocker FROM deps"):
        deps.setdefault(task, set()).add(blocker)
    labels: dict[str, set[str]] = {}
    for task, label in query(db, "SELECT task, label FROM labels"):
        labels.setdefault(task, set()).add(label)
    for task, payload in created.items():
        assert deps.get(task, set()) == set(payload["blockers"]), task
        assert labels.get(task, set()) == set(payload["labels"]), task
    notes = query(db, "SELECT count(*) FROM notes")[0][0]
    done_events = query(db, "SELECT count(*) FROM events WHERE type = 'updated'")[0][0]
    assert notes == done_events


@pytest.mark.slow
def test_eight_claimers_racing_claim_each_ready_task_exactly_once(any_db: str | Path) -> None:
    with open_store(any_db) as store:
        ids = [store.create(f"ready {i}") for i in range(100)]
        blocked = store.create("not ready", blockers=[ids[0]])
    procs = [
        subprocess.Popen(
            [sys.executable, str(CLAIMER), str(any_db), f"agent-{n}", *ids, blocked],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    won: dict[str, list[str]] = {}
    for n, proc in enumerate(procs):
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        won[f"agent-{n}"] = out.split()
    claims = [task for tasks in won.values() for task in tasks]
    assert sorted(claims) == sorted(ids)  # each ready task once, the blocked one never
    with open_store(any_db) as store:
        rows = {t.id: (t.status, t.assignee) for t in store.list("all")}
        claimed_events = [e for e in store.events(0, 1000) if e.type == "claimed"]
    for agent, tasks in won.items():
        assert all(rows[t] == ("in_progress", agent) for t in tasks)
    assert rows[blocked] == ("open", "")
    assert sorted(e.task for e in claimed_events) == sorted(ids)
    print("claims per agent:", sorted(len(t) for t in won.values()))


def _server_pid(db: str | Path) -> int:
    """The one live `ollie_nb.tasks serve` process on `db`, found through /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"ollie_nb.tasks" in argv and os.fsencode(str(db)) in argv:
                found.append(int(entry))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_server_killed_mid_write_keeps_every_answered_create_whole(
    any_db: str | Path,
) -> None:
    db = any_db
    answered: list[str] = []
    calls = 600  # sent at once; the kill comes after the first 50 writes

    async def create(client: Any, i: int) -> None:
        with contextlib.suppress(Exception):  # calls cut off by the kill fail; that is the point
            answered.append(
                await ok(
                    client, "task_create", title=f"t{i}", body="b" * 3000, labels=["k", f"n{i}"]
                )
            )

    with contextlib.suppress(Exception):
        async with connect(db) as client:
            pid = _server_pid(db)
            async with anyio.create_task_group() as tg:
                for i in range(calls):
                    tg.start_soon(create, client, i)
                with open_store(db, create=False) as probe, anyio.fail_after(30):
                    while probe.last_seq() < 50:  # the server is well into the writes
                        await anyio.sleep(0.001)
                os.kill(pid, signal.SIGKILL)
    tasks = {tid: title for tid, title in query(db, "SELECT id, title FROM tasks")}
    assert set(answered) <= set(tasks)  # every create the client saw answered is there
    created = {t for (t,) in query(db, "SELECT task FROM events WHERE type = 'created'")}
    assert created == set(tasks)  # and no task lacks its event, nor an event its task
    labels: dict[str, set[str]] = {}
    for task, label in query(db, "SELECT task, label FROM labels"):
        labels.setdefault(task, set()).add(label)
    assert all(labels[t] == {"k", f"n{title[1:]}"} for t, title in tasks.items())
    assert len(tasks) < calls  # the kill did cut the run short


@pytest.mark.slow
def test_six_processes_opening_a_new_database_at_once_migrate_it_once(
    any_db: str | Path,
) -> None:
    code = "import sys; from ollie_nb.tasks import open_store; open_store(sys.argv[1]).close()"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(any_db)], stderr=subprocess.PIPE)
        for _ in range(6)
    ]
    errors = [p.communicate(timeout=60)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, errors
    versions = query(any_db, "SELECT version FROM schema_version ORDER BY version")
    assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]


@pytest.mark.slow
def test_a_reader_following_events_by_cursor_sees_every_event_once(any_db: str | Path) -> None:
    """Four writers commit 300 events each while a reader pages on with `since=last seq`.

    A seq is drawn before its transaction commits: without writes taking turns, a later
    commit with a lower seq would land behind a cursor that has moved past it.
    """
    open_store(any_db).close()
    writers = [
        subprocess.Popen(
            [sys.executable, str(EVENT_WRITER), str(any_db), "300"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    seen: list[int] = []
    try:
        for writer in writers:  # all connected: start them together
            assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.close()
        with open_store(any_db, create=False) as reader:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                finished = all(w.poll() is not None for w in writers)
                page = reader.events(seen[-1] if seen else 0, 1000)
                seen += [e.seq for e in page]
                if finished and not page:
                    break
        assert [w.wait(10) for w in writers] == [0] * 4
    finally:
        for writer in writers:
            writer.kill()
            writer.wait(10)
    logged = [seq for (seq,) in query(any_db, "SELECT seq FROM events ORDER BY seq")]
    assert len(logged) == 1200
    missed = sorted(set(logged) - set(seen))
    assert missed == [], f"the reader missed {len(missed)} of 1200 events"
    assert seen == logged  # each once, in order
