"""What one user of a shared store cannot do to another: flood a read, stall a watch, break a tree.

Every read a client makes of ollie-tasks stays far under a client's 100,000-character
result cap however large or many the tasks, notes and events are; a cursor reads on.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from ollie_nb.tasks import SqliteTaskStore, open_store
from ollie_nb.tasks._store import MAX_DEPTH
from tests.support.tasks_harness import cli, connect, fails, ok

pytestmark = pytest.mark.anyio

RESULT_CAP = 100_000
NOTE = 16_000  # characters: under the 16 KiB note limit


@pytest.mark.slow
async def test_seven_large_notes_make_pages_that_fit_and_a_cursor_reads_on(
    any_db: str | Path,
) -> None:
    async with connect(any_db) as client:
        task = await ok(client, "task_create", title="Flooded")
        for i in range(7):
            await ok(client, "task_update", id=task, note=str(i) * NOTE)
        await ok(client, "task_update", id=task, status="done")
        listed = await ok(client, "task_events", since=0, limit=200)
        assert len(listed) < RESULT_CAP
        first = json.loads(listed)  # the list form is bounded the same way
        assert 1 <= len(first) < 9 and first[0]["type"] == "created"
        seen: list[dict] = []
        since, pages = 0, 0
        while True:
            text = await ok(client, "task_events", since=since, limit=200, format="page")
            assert len(text) < RESULT_CAP
            page = json.loads(text)
            seen += page["events"]
            since, pages = page["next"], pages + 1
            if not page["more"]:
                break
            assert pages < 10
        resource = (await client.read_resource("tasks://events")).contents[0].text
        assert len(resource) < RESULT_CAP and json.loads(resource)[-1]["type"] == "status_changed"
    assert pages >= 3  # 16,000-character events: a few to a page
    assert [e["type"] for e in seen] == ["created"] + ["updated"] * 7 + ["status_changed"]
    assert [e["seq"] for e in seen] == sorted({e["seq"] for e in seen})
    assert since == seen[-1]["seq"]


@pytest.mark.slow
async def test_an_events_page_says_more_when_the_limit_cut_it(db: Path) -> None:
    async with connect(db) as client:
        for i in range(3):
            await ok(client, "task_create", title=f"e{i}")
        page = json.loads(await ok(client, "task_events", since=0, limit=2, format="page"))
        assert len(page["events"]) == 2 and page["more"] is True
        rest = json.loads(await ok(client, "task_events", since=page["next"], format="page"))
        assert len(rest["events"]) == 1 and rest["more"] is False
        empty = json.loads(await ok(client, "task_events", since=rest["next"], format="page"))
    assert empty == {"events": [], "next": rest["next"], "more": False}


@pytest.mark.slow
async def test_task_read_of_a_task_with_4000_notes_is_small_and_fast(db: Path) -> None:
    with SqliteTaskStore(db, create=True) as store:
        task = store.create("Flooded with notes")
        for i in range(4000):
            store.update(task, note=f"note {i + 1} " + "n" * 4000)
    async with connect(db) as client:
        started = time.perf_counter()
        text = await ok(client, "task_read", id=task)
        elapsed = time.perf_counter() - started
        as_json = json.loads(await ok(client, "task_read", id=task, format="json"))
        earlier = await ok(client, "task_read", id=task, notes_before=as_json["notes_start"])
        oldest = json.loads(await ok(client, "task_read", id=task, notes_before=3, format="json"))
        assert "notes_before" in await fails(client, "task_read", id=task, notes_before=-1)
    assert len(text) < 30_000 and elapsed < 2.0, (len(text), elapsed)
    start = as_json["notes_start"]
    assert as_json["notes_total"] == 4000 and 3980 <= start < 4000
    assert f"notes {start}-4000 of 4000; read earlier ones with notes_before={start}:" in text
    assert text.rstrip().endswith("note 4000 " + "n" * 4000)
    assert f"note {start} " in text and f"note {start - 1} " not in text
    assert f"note {start - 1} " in earlier and f"note {start} " not in earlier
    assert [n["text"].split()[1] for n in oldest["notes"]] == ["1", "2"]


@pytest.mark.slow
async def test_task_list_json_gives_bodies_only_when_its_fields_name_body(db: Path) -> None:
    with SqliteTaskStore(db, create=True) as store:
        goal = store.create("Plan", body="the goal's own words")
        step = store.create("Wash", body="Use the blue bucket.\nRinse twice.", parent=goal)
    async with connect(db) as client:
        default = json.loads(await ok(client, "task_list", status="all", format="json"))
        asked = json.loads(
            await ok(client, "task_list", status="all", format="json", fields=["id", "body"])
        )
    assert all("body" not in t for t in default["tasks"])  # a body may be 64 KiB: only asked
    assert asked["tasks"] == [
        {"id": goal, "body": "the goal's own words"},
        {"id": step, "body": "Use the blue bucket.\nRinse twice."},
    ]


@pytest.mark.slow
async def test_task_list_json_is_paged_by_size_filtered_by_ids_and_fields(db: Path) -> None:
    with SqliteTaskStore(db, create=True) as store:
        goal = store.create("Big plan")
        steps = [store.create(f"Step {i} " + "s" * 150, parent=goal) for i in range(1000)]
    async with connect(db) as client:
        first_text = await ok(client, "task_list", parent=goal, status="all", format="json")
        first = json.loads(first_text)
        got = [t["id"] for t in first["tasks"]]
        cursor, calls = first.get("next"), 1
        while cursor:
            page = json.loads(
                await ok(
                    client,
                    "task_list",
                    parent=goal,
                    status="all",
                    format="json",
                    fields=["id", "status"],
                    cursor=cursor,
                )
            )
            assert all(set(t) == {"id", "status"} for t in page["tasks"])
            got += [t["id"] for t in page["tasks"]]
            cursor, calls = page.get("next"), calls + 1
        picked = json.loads(
            await ok(client, "task_list", ids=[steps[5], steps[2], "t-zzzzz"], status="all",
                     format="json")
        )  # fmt: skip
        goal_text = await ok(client, "task_read", id=goal)
        goal_json = json.loads(await ok(client, "task_read", id=goal, format="json"))
        assert "bad field" in await fails(client, "task_list", format="json", fields=["bogus"])
        assert "bad cursor" in await fails(client, "task_list", format="json", cursor="x")
    assert len(first_text) < RESULT_CAP and 0 < len(first["tasks"]) < 1000
    assert first["total"] == 1000 and first["truncated"] is True
    assert got == steps and calls == 2  # the lean fields fit the other 800 in one page
    assert [t["id"] for t in picked["tasks"]] == [steps[2], steps[5]] and picked["total"] == 2
    assert len(goal_text) < 30_000 and f"  {steps[99]}  [open]" in goal_text
    assert f"{steps[100]}" not in goal_text
    assert f"  ... 900 more: list them with task_list(parent='{goal}', status='all')" in goal_text
    assert goal_json["children_total"] == 1000 and len(goal_json["children"]) == 100


def _chain_by_sql(db: Path, top: str, depth: int) -> str:
    """Hang a chain of `depth` tasks under `top` by SQL, as a store written before the
    depth bound (or by another program) may hold; return the deepest id."""
    with sqlite3.connect(db) as conn:
        parent = top
        for i in range(depth):
            task_id = f"t-deep{i}"
            conn.execute(
                "INSERT INTO tasks (id, title, parent, created_at, updated_at) "
                "VALUES (?, ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
                (task_id, f"level {i + 2}", parent),
            )
            parent = task_id
    return parent


@pytest.mark.slow
def test_tree_of_a_1200_deep_chain_prints_in_text_and_json(db: Path) -> None:
    with SqliteTaskStore(db, create=True) as store:
        top = store.create("level 1")
    deepest = _chain_by_sql(db, top, 1199)
    text = cli(db, "tree")
    assert text.returncode == 0, text.stderr[-500:]
    lines = text.stdout.splitlines()
    assert len(lines) == 1200 and lines[-1] == "  " * 1199 + f"{deepest}  [open]  level 1200"
    as_json = cli(db, "tree", "--json")
    assert as_json.returncode == 0, as_json.stderr[-500:]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # the decoder, too, recurses once per level
    try:
        node, depth = json.loads(as_json.stdout)[0], 1
    finally:
        sys.setrecursionlimit(limit)
    while node["children"]:
        (node,), depth = node["children"], depth + 1
    assert depth == 1200 and node["id"] == deepest


def test_a_parent_chain_is_at_most_max_depth_levels(any_db: str | Path) -> None:
    with open_store(any_db) as store:
        chain = [store.create("level 1")]
        for level in range(2, MAX_DEPTH + 1):
            chain.append(store.create(f"level {level}", parent=chain[-1]))
        with pytest.raises(ValueError, match=rf"{chain[-1]} is {MAX_DEPTH} levels deep.*at most"):
            store.create("one too deep", parent=chain[-1])
        other = store.create("other goal")
        store.create("its step", parent=other)
        with pytest.raises(ValueError, match="at most"):  # a 2-level subtree under level 99
            store.edit(other, parent=chain[-2])
        store.edit(other, parent=chain[-3])  # 98 + 2 levels: fits
        assert [n.task.id for n in store.tree(chain[-3])[0].children] == [chain[-2], other]


def test_the_store_pages_notes_back_and_lists_by_ids_without_edges(any_db: str | Path) -> None:
    with open_store(any_db) as store:
        blocker = store.create("blocker", labels=["x"])
        task = store.create("noted", blockers=[blocker], labels=["y"])
        for i in range(10):
            store.update(task, note=f"n{i + 1}")
        newest = store.get(task, notes=3)
        middle = store.get(task, notes=3, notes_before=newest.notes_start)
        oldest = store.get(task, notes=3, notes_before=2)
        everything = store.get(task)
        bare = store.list("all", ids=[task, "t-zzzzz"], edges=False)
        full = store.list("all", ids=[task])
    assert [n.text for n in newest.notes] == ["n8", "n9", "n10"] and newest.notes_start == 8
    assert [n.text for n in middle.notes] == ["n5", "n6", "n7"] and middle.notes_start == 5
    assert [n.text for n in oldest.notes] == ["n1"] and oldest.notes_total == 10
    assert len(everything.notes) == 10 and everything.notes_start == 1
    assert [(t.id, t.labels, t.waiting_on) for t in bare] == [(task, (), ())]
    assert [(t.labels, t.waiting_on) for t in full] == [(("y",), (blocker,))]
