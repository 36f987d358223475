"""task_claim_next: four ollie-tasks processes on one database each take the next ready step
in one call, every step exactly once and no claim refused; and task_events read from the end."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from ollie_nb.tasks import open_store
from tests.support.tasks_harness import connect, ok
from tests.tasks.test_tasks_concurrency import query

STEPS = 40


def next_id(answer: str) -> str:
    """The id line of a task_claim_next answer ('' for `none: ...`)."""
    ids = [line.removeprefix("id: ") for line in answer.splitlines() if line.startswith("id: ")]
    return ids[0] if ids else ""


def token_of(answer: str) -> str:
    return next(line.removeprefix("token: ") for line in answer.splitlines() if "token: " in line)


@pytest.mark.slow
@pytest.mark.anyio
async def test_four_servers_claim_next_take_each_step_once(any_db: str | Path) -> None:
    with open_store(any_db) as store:
        goal = store.create("Chores")
        steps = [store.create(f"Chore {i}", parent=goal) for i in range(STEPS)]
    taken: list[list[str]] = [[] for _ in range(4)]

    async def one_server(n: int) -> None:
        async with connect(any_db) as client:
            while True:
                answer = await ok(
                    client, "task_claim_next", assignee=f"w{n}", parents=[goal], lease=60
                )
                step = next_id(answer)
                if not step:
                    assert answer.startswith("none:"), answer
                    return
                taken[n].append(step)
                await ok(client, "task_update", id=step, status="done", token=token_of(answer))

    async with anyio.create_task_group() as tg:
        for n in range(4):
            tg.start_soon(one_server, n)
    every = [s for per_server in taken for s in per_server]
    assert sorted(every) == sorted(steps)  # each step once, by exactly one server
    claimed = query(any_db, "SELECT task FROM events WHERE type = 'claimed'")
    assert sorted(t for (t,) in claimed) == sorted(steps)  # one claim each: none twice


def test_claim_next_takes_the_first_ready_of_ids_and_skips_blocked_steps(tmp_path: Path) -> None:
    with open_store(tmp_path / "tasks.db") as store:
        goal = store.create("Chores")
        first = store.create("First", parent=goal)
        second = store.create("Second", parent=goal, blockers=[first])
        third = store.create("Third", parent=goal)
        got = store.claim_next([goal], "ann", 60, ids=[second, third, first])
        assert got is not None and got.task.id == third  # second waits on first
        again = store.claim_next([goal], "bob", 60)
        assert again is not None and again.task.id == first
        assert store.claim_next([goal], "cyd", 60) is None  # second still waits
        store.update(first, status="done")
        last = store.claim_next([goal], "cyd", 60)
        assert last is not None and (last.task.id, last.task.assignee) == (second, "cyd")


@pytest.mark.slow
@pytest.mark.anyio
async def test_task_events_tail_reads_the_newest_events(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        for i in range(30):
            store.create(f"Task {i}")
        last = store.last_seq()
    async with connect(db) as client:
        page = await ok(client, "task_events", limit=3, tail=True)
    data = json.loads(page)
    assert [e["seq"] for e in data["events"]] == [last - 2, last - 1, last]
    assert (data["next"], data["more"]) == (last, False)


@pytest.mark.slow
@pytest.mark.anyio
async def test_every_tool_is_named_in_the_docs(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "TASK_SERVER.md").read_text()
    async with connect(tmp_path / "tasks.db") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
    assert "task_claim_next" in tools
    assert {t for t in tools if f"`{t}(" not in doc and f"| `{t}` |" not in doc} == set()
