"""Claims with leases, on both backends, through real server and claimer processes.

A lease ends by the store's clock and no process watches it: the next transaction that
touches the store hands the lapsed claim back (an event says whose it was), so a worker
that died frees its step within its lease, and a live one keeps it by renewing.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from ollie_nb.tasks import SCHEMA_VERSION, InvalidTaskError, open_store
from tests.support.agents import FIXTURES
from tests.support.tasks_harness import claim_token, cli, connect, fails, ok
from tests.support.waits import wait_until

CLAIMER = FIXTURES / "tasks_lease_claimer.py"


def _events(db: str | Path, since: int = 0) -> list[dict[str, Any]]:
    with open_store(db, create=False) as store:
        events = store.events(since, 1000)
        while events and len(events) % 1000 == 0:
            events += store.events(events[-1].seq, 1000)
    return [e.to_dict() for e in events]


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


async def _claim_when_free(client: Client, task: str, who: str, lease: float) -> str:
    """Claim as soon as the holder's lease lets go; every refusal until then names the holder."""
    with anyio.fail_after(20):
        while True:
            result = await client.call_tool(
                "task_claim", {"id": task, "assignee": who, "lease": lease}
            )
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            if not result.is_error:
                return text
            assert "already claimed by" in text, text
            await anyio.sleep(0.05)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_lapsed_lease_hands_the_task_to_the_next_claimer(any_db: str | Path) -> None:
    async with connect(any_db) as ann, connect(any_db) as bob:
        task = await ok(ann, "task_create", title="Leased step")
        began = time.monotonic()
        claimed = await ok(ann, "task_claim", id=task, assignee="ann", lease=1)
        assert re.fullmatch(
            rf"claimed: {task}  \[in_progress\]  Leased step @ann, lease ends \S+Z\n"
            r"token: \S{20,}\nlease: 1 s",
            claimed,
        )
        assert f"{task} is already claimed by ann" in await fails(
            bob, "task_claim", id=task, assignee="bob"
        )
        # Nothing watches the lease: bob's own claim finds it over and takes the task.
        await _claim_when_free(bob, task, "bob", 30)
        assert time.monotonic() - began >= 1.0
        listed = await ok(bob, "task_list", status="in_progress")
        assert re.fullmatch(rf"{task}  in_progress  Leased step  \(@bob; lease ends \S+Z\)", listed)
        refused = await fails(
            ann, "task_heartbeat", id=task, assignee="ann", token=claim_token(claimed)
        )
        assert f"{task} is claimed by bob, not claimed by ann: ann's lease ran out at" in refused
    events = [(e["type"], e["payload"]) for e in _events(any_db) if e["task"] == task]
    assert [t for t, _ in events] == [
        "created",
        "status_changed",
        "claimed",
        "lease_expired",
        "status_changed",
        "status_changed",
        "claimed",
    ]
    assert events[2][1] == {"assignee": "ann", "lease": 1}
    assert events[3][1]["assignee"] == "ann"
    assert events[4][1] == {"from": "in_progress", "to": "open", "reason": "lease_expired"}
    assert events[6][1] == {"assignee": "bob", "lease": 30}
    # The lease ran one second from ann's claim, by the store's clock.
    claimed_at = next(e for e in _events(any_db) if e["type"] == "claimed")["time"]
    assert 0.9 < _seconds(events[3][1]["lease_until"]) - _seconds(claimed_at) < 1.5


@pytest.mark.slow
@pytest.mark.anyio
async def test_heartbeats_keep_a_claim_past_its_lease(any_db: str | Path) -> None:
    async with connect(any_db) as ann, connect(any_db) as bob:
        task = await ok(ann, "task_create", title="Long step")
        token = claim_token(await ok(ann, "task_claim", id=task, assignee="ann", lease=2))
        began = time.monotonic()
        renewals = 0
        with anyio.fail_after(30):
            while time.monotonic() - began < 4.5:  # more than two leases' worth
                # Either way of renewing: the heartbeat tool, or claiming again.
                tool = "task_claim" if renewals % 2 else "task_heartbeat"
                renewed = await ok(ann, tool, id=task, assignee="ann", lease=2, token=token)
                assert "@ann, lease ends" in renewed
                renewals += 1
                assert "already claimed by ann" in await fails(
                    bob, "task_claim", id=task, assignee="bob"
                )
                assert "claimed by ann, not claimed by bob" in await fails(
                    bob, "task_heartbeat", id=task, assignee="bob"
                )
                await anyio.sleep(0.2)
        assert renewals >= 8
        # Renewals log nothing: the log shows one claim and no expiry.
        types = [e["type"] for e in _events(any_db) if e["task"] == task]
        assert types == ["created", "status_changed", "claimed"]
        # ann stops renewing: within its lease the task is bob's.
        stopped = time.monotonic()
        bobs = claim_token(await _claim_when_free(bob, task, "bob", 30))
        assert 1.5 < time.monotonic() - stopped < 2.0 + 5.0
        assert "@bob, lease ends" in await ok(
            bob, "task_heartbeat", id=task, assignee="bob", token=bobs
        )
        await ok(bob, "task_update", id=task, status="done", token=bobs)
        assert "is done, not claimed by bob: stop working" in await fails(
            bob, "task_heartbeat", id=task, assignee="bob", token=bobs
        )
    lease_ends = [
        row["lease_until"] for row in (t.to_dict() for t in open_store(any_db).list("all"))
    ]
    assert lease_ends == [""]  # a finished task holds no lease


@pytest.mark.slow
def test_a_lapsed_claim_reads_as_open_with_no_write_in_between(any_db: str | Path) -> None:
    with open_store(any_db) as store:
        task = store.create("Worker died")
        blocked = store.create("After it", blockers=[task])
    assert cli(any_db, "claim", task, "--as", "ann", "--lease", "1").returncode == 0
    with open_store(any_db, create=False) as reader:
        assert [t.id for t in reader.ready()] == []
        # nobody writes: reading alone must see the lease over
        wait_until(reader.ready, 20, "the lapsed claim read as open")
        assert [(t.id, t.status, t.assignee) for t in reader.ready()] == [(task, "open", "")]
        assert reader.get(blocked).ready is False
        lapsed = [e for e in reader.events(0, 1000) if e.type == "lease_expired"]
        assert [(e.task, e.payload["assignee"]) for e in lapsed] == [(task, "ann")]


@pytest.mark.slow
def test_eight_claimers_on_expiring_leases_hold_each_task_once_per_lease(
    any_db: str | Path, tmp_path: Path
) -> None:
    lease, rounds = 1.0, 3
    with open_store(any_db) as store:
        ids = [store.create(f"step {i}") for i in range(6)]
    stop = tmp_path / "stop"
    procs = [
        subprocess.Popen(
            [sys.executable, str(CLAIMER), str(any_db), f"w{n}", str(lease), str(stop), *ids],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    try:
        with open_store(any_db, create=False) as probe:

            def every_task_claimed_rounds_times() -> bool:
                assert [p.poll() for p in procs] == [None] * 8, "a claimer stopped early"
                claims = [e for e in probe.events(0, 1000) if e.type == "claimed"]
                return all(sum(e.task == t for e in claims) >= rounds for t in ids)

            wait_until(every_task_claimed_rounds_times, 120, f"{rounds} claims of each task", 0.2)
        stop.touch()
        won = [(f"w{n}", p.communicate(timeout=60)[0].split()) for n, p in enumerate(procs)]
        assert [p.returncode for p in procs] == [0] * 8
    finally:
        for p in procs:
            p.kill()
            p.wait(10)
    events = _events(any_db)
    claimed = sorted(
        (e["task"], e["payload"]["assignee"]) for e in events if e["type"] == "claimed"
    )
    # Every claim a claimer saw succeed is in the log, and nothing else is.
    assert claimed == sorted((task, who) for who, tasks in won for task in tasks)
    for task in ids:
        trail = [
            e for e in events if e["task"] == task and e["type"] in ("claimed", "lease_expired")
        ]
        kinds = [e["type"] for e in trail]
        # Claims and expiries alternate: never a second claim while a lease holds.
        assert kinds[: len(kinds) // 2 * 2] == ["claimed", "lease_expired"] * (len(kinds) // 2)
        assert kinds.count("claimed") >= rounds
        for claim, expiry in zip(trail[::2], trail[1::2]):
            assert expiry["payload"]["assignee"] == claim["payload"]["assignee"]
            held = _seconds(expiry["payload"]["lease_until"]) - _seconds(claim["time"])
            assert lease - 0.1 < held < lease + 0.5
        for expiry, claim in zip(trail[1::2], trail[2::2]):
            # The next claim came only after the lease had ended.
            assert _seconds(claim["time"]) >= _seconds(expiry["payload"]["lease_until"]) - 0.05
    print("claims per claimer:", sorted(len(tasks) for _, tasks in won))


@pytest.mark.slow
def test_claim_and_heartbeat_from_the_command_line_and_list_shows_the_lease(
    any_db: str | Path,
) -> None:
    with open_store(any_db) as store:
        task = store.create("By hand")
    before = time.time()
    claimed = cli(any_db, "claim", task, "--assignee", "ann", "--lease", "600")
    found = re.fullmatch(
        rf"claimed: {task}  \[in_progress\]  By hand @ann, lease ends (\S+Z)\n", claimed.stdout
    )
    assert found, claimed.stdout + claimed.stderr
    assert before + 599 < _seconds(found.group(1)) < time.time() + 601
    listed = cli(any_db, "list", "--status", "in_progress")
    assert listed.stdout == f"{task}  in_progress  By hand  (@ann; lease ends {found.group(1)})\n"
    shown = json.loads(cli(any_db, "show", task, "--json").stdout)
    assert shown["lease_until"] == found.group(1)
    again = cli(any_db, "claim", task, "--as", "bob")
    assert again.returncode == 1 and f"{task} is already claimed by ann" in again.stderr
    renewed = cli(any_db, "heartbeat", task, "--assignee", "ann", "--lease", "0")
    assert renewed.stdout == f"renewed: {task}  [in_progress]  By hand @ann, no lease\n"
    assert cli(any_db, "list", "--status", "in_progress").stdout.endswith("(@ann)\n")
    bad = cli(any_db, "claim", task, "--as", "ann", "--lease", "-1")
    assert bad.returncode == 2 and "--lease: must be 0 (no lease) or more seconds" in bad.stderr


@pytest.mark.slow
def test_a_client_whose_clock_runs_an_hour_ahead_leaves_the_lease_alone(
    any_db: str | Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(any_db) as store:
        task = store.create("By the store's clock")
    assert cli(any_db, "claim", task, "--as", "ann", "--lease", "60").returncode == 0
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + 3600)
    with open_store(any_db, create=False) as ahead:
        with pytest.raises(InvalidTaskError, match="already claimed by ann"):
            ahead.claim(task, "bob")
        assert [(t.id, t.assignee) for t in ahead.list("in_progress")] == [(task, "ann")]
        assert "lease_expired" not in [e.type for e in ahead.events(0, 1000)]


def _version_1_store(db: str | Path) -> None:
    """A store as the first schema made it, with a claim in progress (claims had no lease)."""
    rows = [
        "INSERT INTO schema_version VALUES (1, 'earlier')",
        "INSERT INTO tasks (id, title, status, assignee, created_at, updated_at) "
        "VALUES ('t-old00', 'Claimed before leases', 'in_progress', 'ann', 'x', 'x')",
    ]
    create = "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    if isinstance(db, Path):
        from ollie_nb.tasks._schema import MIGRATIONS

        db.parent.mkdir(parents=True)
        conn = sqlite3.connect(db, isolation_level=None)
    else:
        import psycopg

        from ollie_nb.tasks._pg_schema import PG_MIGRATIONS as MIGRATIONS

        conn = psycopg.connect(db, autocommit=True)
    try:
        for statement in (*MIGRATIONS[0], create, *rows):
            conn.execute(statement)
    finally:
        conn.close()


def test_a_claim_made_before_leases_survives_the_migration_and_never_lapses(
    any_db: str | Path,
) -> None:
    _version_1_store(any_db)
    with open_store(any_db) as store:
        (old,) = store.list("in_progress")
        assert (old.id, old.assignee, old.lease_until) == ("t-old00", "ann", "")
        with pytest.raises(InvalidTaskError, match="already claimed by ann"):
            store.claim("t-old00", "bob", lease=1)
        renewed = store.heartbeat("t-old00", "ann", lease=600)  # the holder may take a lease
        assert renewed.status == "in_progress" and renewed.lease_until
        assert [e.type for e in store.events(0, 1000)] == []
    assert store_versions(any_db) == list(range(1, SCHEMA_VERSION + 1))


def store_versions(db: str | Path) -> list[int]:
    with open_store(db, create=False) as store:
        rows = store._run(
            lambda c: c.execute("SELECT version FROM schema_version ORDER BY 1").fetchall(),
            write=False,
        )
    return [int(r[0]) for r in rows]


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_lapse_found_by_a_read_signals_the_servers_own_subscribers(
    any_db: str | Path,
) -> None:
    with open_store(any_db) as store:
        task = store.create("Its worker is gone")
    async with (
        connect(any_db) as watcher,
        watcher.listen(resource_subscriptions=["tasks://events"]) as sub,
    ):
        assert cli(any_db, "claim", task, "--as", "ann", "--lease", "1").returncode == 0
        with anyio.fail_after(20):
            await sub.__anext__()  # the claim, made by another process
            while "open" not in await ok(watcher, "task_list", status="ready"):
                await anyio.sleep(0.05)  # reading through this server finds the lapse
            await sub.__anext__()
            events = [e for e in _events(any_db) if e["type"] == "lease_expired"]
    assert [(e["task"], e["payload"]["assignee"]) for e in events] == [(task, "ann")]
