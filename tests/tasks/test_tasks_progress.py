"""A claim's progress told by task_heartbeat (schema 6): kept per task until the next claim,
returned by task_list's `progress` field and task_read, checked for bounds, logged as a
`progress` event when it changed; and a schema-5 file migrated with its tasks intact.

The store on both backends; the tools through a real `ollie-tasks` process over stdio.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ollie_nb.tasks import SCHEMA_VERSION, InvalidTaskError, TaskStore, open_store
from ollie_nb.tasks._progress import Progress, progress_of
from ollie_nb.tasks._schema import MIGRATIONS
from tests.support.tasks_harness import claim_token, cli, connect, fails, ok

TOLD = Progress(1234, 0.0123, "bash")


@pytest.fixture
def store(any_db: str | Path):
    with open_store(any_db) as s:
        yield s


def progress_events(store: TaskStore) -> list[dict]:
    return [e.payload for e in store.events(0, 1000) if e.type == "progress"]


def test_a_heartbeat_keeps_the_told_progress_until_the_next_claim(store: TaskStore) -> None:
    goal = store.create("goal")
    step = store.create("step", parent=goal)
    store.claim(step, "w1", 300)
    assert store.get(step).progress is None
    store.heartbeat(step, "w1", 300, progress=TOLD)
    store.heartbeat(step, "w1", 300)  # a heartbeat telling nothing keeps what was told
    assert store.get(step).progress == TOLD
    listed = {t.id: t.progress for t in store.list("all", progress=True)}
    assert listed == {goal: None, step: TOLD}
    assert all(t.progress is None for t in store.list("all"))  # read only when asked for
    store.heartbeat(step, "w1", 300, progress=TOLD)  # the same again: no news, no event
    assert progress_events(store) == [
        {"assignee": "w1", "tokens": 1234, "cost": 0.0123, "last_tool": "bash"}
    ]
    store.update(step, status="failed")
    store.reopen(step)
    store.claim(step, "w2", 300)
    assert store.get(step).progress is None  # a new claim starts untold


def test_a_heartbeat_of_a_claim_not_held_keeps_no_progress(store: TaskStore) -> None:
    step = store.create("step")
    store.claim(step, "w1", 300)
    with pytest.raises(InvalidTaskError, match="not claimed by w2"):
        store.heartbeat(step, "w2", 300, progress=TOLD)
    assert store.get(step).progress is None and progress_events(store) == []


@pytest.mark.parametrize(
    ("tokens", "cost", "tool"),
    [
        (-1, 0.0, "bash"),
        (1, float("nan"), "bash"),
        (1, -0.5, "bash"),
        (1, 0.0, "x" * 101),
        (1, 0.0, "a\x1bb"),
    ],
)
def test_progress_out_of_bounds_is_refused(tokens: int, cost: float, tool: str) -> None:
    with pytest.raises(InvalidTaskError):
        progress_of(tokens, cost, tool)


def test_a_schema_5_file_migrates_with_its_tasks_and_no_progress(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    for version, statements in enumerate(MIGRATIONS[:5], start=1):
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, 'then')", (version,))
    now = "2026-01-01T00:00:00Z"
    conn.execute(
        "INSERT INTO tasks (id, title, status, assignee, created_at, updated_at, lease_until) "
        "VALUES ('t-aaaaa', 'held', 'in_progress', 'w1', ?, ?, 4102444800.0)",
        (now, now),
    )
    conn.close()
    assert SCHEMA_VERSION == 6
    with open_store(db) as store:
        task = store.get("t-aaaaa")
        assert (task.title, task.assignee, task.progress) == ("held", "w1", None)
        store.heartbeat("t-aaaaa", "w1", 300, progress=TOLD)
        assert store.get("t-aaaaa").progress == TOLD
    with sqlite3.connect(db) as conn:
        versions = [
            v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY version")
        ]
    assert versions == [1, 2, 3, 4, 5, 6]


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_tools_take_and_give_the_progress(tmp_path: Path) -> None:
    async with connect(tmp_path / "tasks.db") as client:
        step = await ok(client, "task_create", title="step")
        token = claim_token(await ok(client, "task_claim", id=step, assignee="w1"))
        told = {"tokens": 99, "cost": 0.25, "last_tool": "<b>bash</b>"}
        await ok(client, "task_heartbeat", id=step, assignee="w1", token=token, **told)
        page = json.loads(
            await ok(client, "task_list", status="all", format="json", fields=["id", "progress"])
        )
        assert page["tasks"] == [{"id": step, "progress": told}]
        plain = json.loads(await ok(client, "task_list", status="all", format="json"))
        assert "progress" not in plain["tasks"][0]
        assert "progress: 99 tokens, $0.2500, last tool <b>bash</b>" in await ok(
            client, "task_read", id=step
        )
        why = await fails(client, "task_heartbeat", id=step, assignee="w1", token=token, tokens=-5)
        assert "tokens must be a whole number" in why


@pytest.mark.slow
def test_the_cli_heartbeat_tells_progress_and_show_says_it(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        step = store.create("step")
        store.claim(step, "ann", 300)
    told = cli(
        db,
        "heartbeat",
        step,
        "--as",
        "ann",
        "--tokens",
        "5",
        "--cost",
        "0.1",
        "--last-tool",
        "bash",
    )
    assert told.returncode == 0, told.stderr
    assert "progress: 5 tokens, $0.1000, last tool bash" in cli(db, "show", step).stdout
    refused = cli(db, "heartbeat", step, "--as", "ann", "--tokens", "-1")
    assert refused.returncode != 0 and "tokens must be a whole number" in refused.stderr
