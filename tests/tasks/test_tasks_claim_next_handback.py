"""task_claim_next on a real ollie-tasks process: no step is stranded by its previous
assignee (a step handed back, or whose lease ran out, is the next claimer's), and a run
offering more than 100 ready steps claims them all."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ollie_nb.tasks import open_store
from tests.support.tasks_harness import claim_token, connect, ok
from tests.tasks.test_tasks_claim_next import next_id, token_of
from tests.tasks.test_tasks_concurrency import query


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_step_handed_back_by_any_assignee_is_claimed_next(any_db: str | Path) -> None:
    db = any_db
    with open_store(db) as store:
        goal = store.create("Chores")
        old = store.create("Handed back by a per-step assignee", parent=goal)
        mine = store.create("Handed back by another worker", parent=goal)
    async with connect(db) as client:
        for step, holder in ((old, "w1@abcd/step1"), (mine, "w2@ef01")):
            claimed = await ok(client, "task_claim", id=step, assignee=holder, lease=60)
            token = claim_token(claimed)
            await ok(client, "task_update", id=step, status="open", token=token)
        first = await ok(client, "task_claim_next", assignee="w1@abcd", parents=[goal], lease=60)
        second = await ok(client, "task_claim_next", ids=[mine], assignee="w3@2345", lease=60)
        assert (next_id(first), next_id(second)) == (old, mine)
        assert token_of(first) and token_of(second)
        rows = query(db, "SELECT id, assignee, status FROM tasks WHERE parent = ?", (goal,))
        assert sorted(rows) == sorted(
            [(old, "w1@abcd", "in_progress"), (mine, "w3@2345", "in_progress")]
        )


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_step_whose_lease_ran_out_is_claimed_next(db: Path) -> None:
    with open_store(db) as store:
        goal = store.create("Chores")
        step = store.create("Claimed, then its holder went away", parent=goal)
        store.claim(step, "w1@abcd/step1", 60)
    with sqlite3.connect(db) as conn:  # the lease ran out long ago
        conn.execute("UPDATE tasks SET lease_until = 1 WHERE id = ?", (step,))
    async with connect(db) as client:
        got = await ok(client, "task_claim_next", assignee="w2@ef01", parents=[goal], lease=60)
        assert next_id(got) == step
    assert query(db, "SELECT assignee FROM tasks WHERE id = ?", (step,)) == [("w2@ef01",)]
