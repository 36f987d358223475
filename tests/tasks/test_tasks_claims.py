"""Claims bound to their holder, leases within bounds: real server processes, real databases.

Over MCP a task claimed with task_claim changes only with the claim's token (renew,
settle, release, note, hand over); a task no task_claim holds stays free, and the
CLI and the database itself are trusted.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from ollie_nb.tasks import open_store
from ollie_nb.tasks._store import Caller
from tests.support.tasks_harness import (
    as_user,
    claim_token,
    cli,
    connect,
    fails,
    http_server,
    ok,
)

# every test runs ollie-tasks or its CLI in a process
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def _claim(client: Client, task: str, who: str, lease: float = 300) -> str:
    return claim_token(await ok(client, "task_claim", id=task, assignee=who, lease=lease))


async def _status(client: Client, task: str) -> tuple[str, str]:
    """(status, assignee) of a task as task_read tells it."""
    read = json.loads(await ok(client, "task_read", id=task, format="json"))
    return read["status"], read["assignee"]


async def test_only_the_claims_token_changes_a_claimed_task(any_db: str | Path) -> None:
    async with connect(any_db) as alice, connect(any_db) as mallory:
        task = await ok(alice, "task_create", title="Alice's step")
        token = await _claim(alice, task, "alice")
        assert await _status(alice, task) == ("in_progress", "alice")
        # Another client naming itself alice renews nothing, takes nothing, settles nothing.
        attempts = [
            ("task_heartbeat", {"assignee": "alice", "lease": 604800}),
            ("task_claim", {"assignee": "alice"}),
            ("task_update", {"assignee": "mallory"}),
            ("task_update", {"status": "done"}),
            ("task_update", {"status": "open"}),
            ("task_update", {"note": "as the holder"}),
        ]
        for tool, args in attempts:
            refused = await fails(mallory, tool, id=task, **args)
            assert "claimed by alice with task_claim: pass the token" in refused, (tool, refused)
            wrong = await fails(mallory, tool, id=task, token="not-" + token, **args)
            assert "the token given is not the token of that claim" in wrong, (tool, wrong)
        assert await _status(alice, task) == ("in_progress", "alice")
        await ok(alice, "task_update", id=task, note="halfway", token=token)
        await ok(alice, "task_heartbeat", id=task, assignee="alice", token=token)
        # Released with the token, the task is free again: anyone may take it.
        await ok(alice, "task_update", id=task, status="open", token=token)
        assert "is open: the claim this token was for is gone" in await fails(
            alice, "task_update", id=task, status="done", token=token
        )
        await ok(mallory, "task_update", id=task, status="done")


async def test_a_task_no_task_claim_holds_stays_free_to_update(any_db: str | Path) -> None:
    async with connect(any_db) as plain, connect(any_db) as other:
        task = await ok(plain, "task_create", title="Seed-convention step")
        await ok(plain, "task_update", id=task, status="in_progress", assignee="plain")
        await ok(other, "task_update", id=task, note="looked at it")
        await ok(other, "task_heartbeat", id=task, assignee="plain")
        await ok(other, "task_update", id=task, status="done")
        assert await _status(plain, task) == ("done", "plain")


async def test_a_lapsed_holder_cannot_settle_a_step_someone_else_claimed(
    any_db: str | Path,
) -> None:
    async with connect(any_db) as ann, connect(any_db) as bob:
        task = await ok(ann, "task_create", title="Contested step")
        anns = await _claim(ann, task, "ann", lease=1)
        with anyio.fail_after(20):
            while True:
                result = await bob.call_tool(
                    "task_claim", {"id": task, "assignee": "bob", "lease": 60}
                )
                if not result.is_error:
                    break
                await anyio.sleep(0.05)
        for args in ({"status": "open"}, {"status": "done"}, {"note": "finished"}):
            refused = await fails(ann, "task_update", id=task, token=anns, **args)
            assert "claimed by bob with task_claim: the token given is not" in refused
        assert await _status(bob, task) == ("in_progress", "bob")


async def test_the_token_of_a_lapsed_claim_settles_nothing(db: Path) -> None:
    async with connect(db) as ann:
        task = await ok(ann, "task_create", title="Left too long")
        token = await _claim(ann, task, "ann", lease=1)
        with anyio.fail_after(20):
            while (await _status(ann, task))[0] != "open":
                await anyio.sleep(0.05)
        assert "is open: the claim this token was for is gone" in await fails(
            ann, "task_update", id=task, status="done", token=token
        )
        assert await _status(ann, task) == ("open", "")


async def test_handing_a_claim_over_ends_its_token(db: Path) -> None:
    async with connect(db) as ann:
        task = await ok(ann, "task_create", title="Handed over")
        token = await _claim(ann, task, "ann")
        await ok(ann, "task_update", id=task, assignee="bob", token=token)
        assert "the claim this token was for is gone" in await fails(
            ann, "task_update", id=task, status="done", token=token
        )
        # bob holds a plain in-progress task now: he binds it to a claim of his own.
        bobs = await _claim(ann, task, "bob")
        assert bobs != token
        await ok(ann, "task_update", id=task, status="done", token=bobs)


async def test_tokens_stay_out_of_reads_the_event_log_and_the_database(db: Path) -> None:
    async with connect(db) as ann:
        task = await ok(ann, "task_create", title="Secret claim")
        token = await _claim(ann, task, "ann")
        seen = [
            await ok(ann, "task_read", id=task),
            await ok(ann, "task_read", id=task, format="json"),
            await ok(ann, "task_list", status="all", format="json", fields=["id", "assignee"]),
            await ok(ann, "task_list", status="all"),
            await ok(ann, "task_events", since=0),
        ]
        assert all(token not in text for text in seen)
    for path in db.parent.glob("tasks.db*"):  # the database and its WAL
        assert token.encode() not in path.read_bytes()
    assert token not in cli(db, "show", task, "--json").stdout


# --- lease bounds ---------------------------------------------------------------------------


async def test_leases_are_capped_and_never_endless_by_default(any_db: str | Path) -> None:
    async with connect(any_db) as ann:
        task = await ok(ann, "task_create", title="Bounded")
        for tool in ("task_claim", "task_heartbeat"):
            refused = await fails(ann, tool, id=task, assignee="ann", lease=0)
            assert "lease 0 (a claim without end) is refused by this server" in refused
        claimed = await ok(ann, "task_claim", id=task, assignee="ann", lease=604800)
        assert claimed.endswith("\nlease: 3600 s (cut from 604800 s: this server's cap)")
        renewed = await ok(
            ann, "task_heartbeat", id=task, assignee="ann", lease=7200, token=claim_token(claimed)
        )
        assert renewed.endswith("\nlease: 3600 s (cut from 7200 s: this server's cap)")
        lease_end = open_store(any_db).get(task).lease_until
        assert lease_end < time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 3700))


async def test_serve_options_set_the_cap_and_allow_endless_leases(db: Path) -> None:
    async with connect(db, "--max-lease", "60", "--endless-leases") as ann:
        task = await ok(ann, "task_create", title="Endless")
        claimed = await ok(ann, "task_claim", id=task, assignee="ann", lease=0)
        assert claimed.endswith("\nlease: none (this server accepts claims without end)")
        assert "no lease" in claimed.splitlines()[0]
        renewed = await ok(
            ann, "task_heartbeat", id=task, assignee="ann", lease=90, token=claim_token(claimed)
        )
        assert renewed.endswith("\nlease: 60 s (cut from 90 s: this server's cap)")


def test_the_cli_is_trusted_with_endless_leases_and_claims_it_holds(db: Path) -> None:
    with open_store(db) as store:
        task = store.create("At the shell")
    assert cli(db, "claim", task, "--as", "ann", "--lease", "0").returncode == 0
    renewed = cli(db, "heartbeat", task, "--as", "ann", "--lease", "0")
    assert renewed.returncode == 0 and "no lease" in renewed.stdout
    assert "token" not in renewed.stdout


def test_a_store_of_the_previous_schema_gains_the_token_column(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with open_store(db) as store:
        task = store.create("Made before tokens")
    conn = sqlite3.connect(db)
    for column in ("progress_tokens", "progress_cost", "progress_tool"):  # schema 6's
        conn.execute(f"ALTER TABLE tasks DROP COLUMN {column}")
    conn.execute("ALTER TABLE tasks DROP COLUMN claim_token")
    conn.execute("ALTER TABLE labels DROP COLUMN setter")
    conn.execute("DROP TABLE inbox")
    conn.execute("DELETE FROM schema_version WHERE version >= 3")
    conn.commit()
    conn.close()
    with open_store(db) as store:
        assert store.claim(task, "ann").token
        assert store.get(task).status == "in_progress"


def test_a_store_of_the_previous_schema_gains_label_setters(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with open_store(db) as store:
        task = store.create("Made before setters", labels=["approved"])
    conn = sqlite3.connect(db)
    for column in ("progress_tokens", "progress_cost", "progress_tool"):  # schema 6's
        conn.execute(f"ALTER TABLE tasks DROP COLUMN {column}")
    conn.execute("ALTER TABLE labels DROP COLUMN setter")
    conn.execute("DROP TABLE inbox")
    conn.execute("DELETE FROM schema_version WHERE version >= 4")
    conn.commit()
    conn.close()
    with open_store(db) as store:
        assert store.get(task).labels_by == {}
        named = store.create("Made after", labels=["approved"], caller=Caller(user="alice"))
        assert store.get(named).labels_by == {"approved": "alice"}


# --- users of an HTTP store -----------------------------------------------------------------

ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789"


async def test_http_users_claim_renew_and_log_only_as_themselves(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text(f"# the team\nalice {ALICE}\n\nbob   {BOB}  # reviews\n")
    db = tmp_path / "tasks.db"
    async with (
        http_server(db, "--tokens", str(users)) as url,
        as_user(url, ALICE) as alice,
        as_user(url, BOB) as bob,
    ):
        task = await ok(alice, "task_create", title="Shared step")
        other = await ok(bob, "task_create", title="Bob's own")
        assert "you are alice on this server: claim, renew and take tasks as alice, not bob" in (
            await fails(alice, "task_claim", id=task, assignee="bob")
        )
        claimed = await ok(alice, "task_claim", id=task, assignee="")  # the server names her
        assert "@alice, lease ends" in claimed.splitlines()[0]
        token = claim_token(claimed)
        # Even holding alice's token, bob renews nothing as alice, nor as himself.
        assert "you are bob on this server" in await fails(
            bob, "task_heartbeat", id=task, assignee="alice", token=token
        )
        assert "claimed by alice, not claimed by bob" in await fails(
            bob, "task_heartbeat", id=task, assignee="bob", token=token
        )
        assert "you are bob on this server" in await fails(
            bob, "task_update", id=other, status="in_progress", assignee="alice"
        )
        await ok(bob, "task_update", id=other, status="in_progress")  # set to bob himself
        await ok(alice, "task_update", id=task, note="halfway", token=token)
        async with httpx.AsyncClient() as http:
            refused = await http.post(url, json={}, headers={"Authorization": "Bearer nobody"})
            assert refused.status_code == 401
    with open_store(db, create=False) as store:
        assert store.get(other).assignee == "bob"
        logged = [(e.task, e.type, e.payload.get("by")) for e in store.events(0, 1000)]
    assert logged == [
        (task, "created", "alice"),
        (other, "created", "bob"),
        (task, "status_changed", "alice"),
        (task, "claimed", "alice"),
        (other, "status_changed", "bob"),
        (other, "updated", "bob"),
        (task, "updated", "alice"),
    ]


async def test_a_label_records_the_http_user_who_set_it(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text(f"alice {ALICE}\nbob {BOB}\n")
    db = tmp_path / "tasks.db"
    with open_store(db) as store:  # the CLI: trusted, unnamed
        unnamed = store.create("Filed locally", labels=["approved"])
    async with http_server(db, "--tokens", str(users)) as url, as_user(url, ALICE) as alice:
        goal = await ok(alice, "task_create", title="Alice's plan", labels=["approved", "x"])
        read = json.loads(await ok(alice, "task_read", id=goal, format="json"))
        local = json.loads(await ok(alice, "task_read", id=unnamed, format="json"))
        asked = ["id", "labels_by"]
        listed = json.loads(await ok(alice, "task_list", status="all", format="json", fields=asked))
        plain = json.loads(await ok(alice, "task_list", status="all", format="json"))
    assert read["labels_by"] == {"approved": "alice", "x": "alice"}
    assert local["labels"] == ["approved"] and local["labels_by"] == {}
    assert listed["tasks"] == [
        {"id": unnamed, "labels_by": {}},
        {"id": goal, "labels_by": {"approved": "alice", "x": "alice"}},
    ]
    assert all("labels_by" not in t for t in plain["tasks"])  # only when fields asks for it


async def test_the_single_token_beside_named_users_stays_unnamed(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text(f"alice {ALICE}\n")
    (tmp_path / "token").write_text("shared-token-0123456789\n")
    db = tmp_path / "tasks.db"
    options = ("--tokens", str(users), "--token-file", str(tmp_path / "token"))
    async with http_server(db, *options) as url, as_user(url, "shared-token-0123456789") as c:
        task = await ok(c, "task_create", title="From the shared token")
        assert "@carol" in await ok(c, "task_claim", id=task, assignee="carol")
    with open_store(db, create=False) as store:
        assert all("by" not in e.payload for e in store.events(0, 1000))


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("alice\n", "line 1: write `name token`"),
        (f"# x\nalice {ALICE} extra\n", "line 2: write `name token`"),
        ("alice short\n", "line 1: alice's token is shorter than 16 characters"),
        (f"alice {ALICE}\nalice {BOB}\n", "line 2: alice or its token is given twice"),
        (f"al\x1bice {ALICE}\n", "line 1: write `name token`"),
        ("# nobody\n", "names no user"),
    ],
)
def test_a_malformed_tokens_file_is_refused_in_one_line(
    tmp_path: Path, text: str, complaint: str
) -> None:
    users = tmp_path / "users"
    users.write_text(text)
    done = cli(tmp_path / "t.db", "serve", "--http", "--port", "1", "--tokens", str(users))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and complaint in done.stderr, done.stderr
    assert ALICE not in done.stderr and BOB not in done.stderr
