"""The board's model and feed on a real ollie-tasks store: which plans, who holds each
claimed step, the lease's time left and the heartbeat's age, a lapsed lease, the filters,
escaping, and a board that follows another process's writes at a bounded rate.

Real `ollie-tasks` server subprocesses on a real SQLite file (slow: they start processes).
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import pytest

from ollie_nb.core._board_feed import Board, board_feed
from ollie_nb.planning import StepState
from ollie_nb.planning._board import BoardFilter, ClaimLog, board_html, board_of
from ollie_nb.planning._client import LeasePolicy, TaskClient
from ollie_nb.tools import McpServer
from tests.support.agents import THIS_TREE, tasks_agent
from tests.support.waits import until

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

HOSTILE = "<script>alert('x')</script>"
EVIL_HOLDER = "<img src=x onerror=alert(1)>"


async def plan(client: TaskClient, title: str, steps: int) -> tuple[str, list[str]]:
    """A goal with a chain of `steps` steps on the store: its id and the steps' ids."""
    goal = await client.create(title=title)
    ids: list[str] = []
    for n in range(steps):
        ids.append(await client.create(title=f"{title} step {n + 1}", parent=goal))
    return goal, ids


async def client_of(make_core, db: Path) -> TaskClient:
    core = await make_core(agent=tasks_agent(db))
    client = core.servers.task_client
    assert client is not None
    return client


async def test_the_board_names_each_holder_with_its_lease_and_heartbeat(make_core, tmp_path):
    client = await client_of(make_core, tmp_path / "tasks.db")
    goal_a, (a1, a2) = await plan(client, "Ship it", 2)
    goal_b, (b1,) = await plan(client, HOSTILE, 1)
    assert (await client.claim(a1, "ollie@ab12/step1", LeasePolicy(300, True))).taken
    assert (await client.claim(b1, EVIL_HOLDER, LeasePolicy(60, True))).taken
    log = ClaimLog()
    log.fold(await client.newest(1000))
    now = time.time()
    plans = board_of(await client.tasks(), log, now)
    assert [p.goal.id for p in plans] == [goal_a, goal_b]
    held = plans[0].holdings[a1]
    assert held.holder == "ollie@ab12/step1" and not held.lapsed
    assert held.lease_left is not None and 290 < held.lease_left <= 300
    assert held.heartbeat_age is not None and 0 <= held.heartbeat_age < 10
    assert held.running is not None and 0 <= held.running < 10
    assert a2 not in plans[0].holdings  # open, never claimed: no holding
    other = plans[1].holdings[b1]
    assert other.holder == EVIL_HOLDER and other.lease_left is not None
    assert other.lease_left <= 60
    later = board_of(await client.tasks(), log, now + 120)[0].holdings[a1]
    assert later.lease_left is not None and 170 < later.lease_left <= 180
    assert later.heartbeat_age is not None and later.heartbeat_age >= 120


async def test_a_lapsed_lease_shows_as_lapsed_until_claimed_again(make_core, tmp_path):
    client = await client_of(make_core, tmp_path / "tasks.db")
    _, (s1,) = await plan(client, "Lapse", 1)
    assert (await client.claim(s1, "worker-7", LeasePolicy(1, True))).taken
    log = ClaimLog()
    log.fold(await client.newest(1000))
    tasks = await client.tasks()
    assert not board_of(tasks, log, time.time())[0].holdings[s1].lapsed
    late = board_of(tasks, log, time.time() + 5)[0].holdings[s1]  # the store has not said yet
    assert late.lapsed and late.holder == "worker-7"
    await until(lambda: time.time() > log.claims[s1].since + 1.5, what="the lease ran out")
    await client.create(title="a write that reopens lapsed claims")
    log.fold((await client.events(log.seq, 100)).events)
    tasks = await client.tasks()
    reopened = board_of(tasks, log, time.time())[0]
    assert reopened.steps[0].state is StepState.OPEN
    assert reopened.holdings[s1].lapsed and reopened.holdings[s1].holder == "worker-7"
    assert (await client.claim(s1, "worker-8", LeasePolicy(300, True))).taken
    log.fold((await client.events(log.seq, 100)).events)
    again = board_of(await client.tasks(), log, time.time())[0].holdings[s1]
    assert not again.lapsed and again.holder == "worker-8"


async def test_the_filters_pick_goal_holder_and_state(make_core, tmp_path):
    client = await client_of(make_core, tmp_path / "tasks.db")
    goal_a, (a1,) = await plan(client, "Mine", 1)
    goal_b, (b1,) = await plan(client, "Theirs", 1)
    goal_c, (c1,) = await plan(client, "Done already", 1)
    await client.claim(a1, "ollie@ab12/step1", LeasePolicy(300, True))
    await client.claim(b1, "ollie-other@zz99", LeasePolicy(300, True))
    await client.update(c1, status="done")
    log = ClaimLog()
    log.fold(await client.newest(1000))
    tasks, now = await client.tasks(), time.time()

    def goals(which: BoardFilter) -> list[str]:
        return [p.goal.id for p in board_of(tasks, log, now, which)]

    assert goals(BoardFilter()) == [goal_a, goal_b, goal_c]
    assert goals(BoardFilter(goal=goal_b)) == [goal_b]
    assert goals(BoardFilter(mine="ollie")) == [goal_a]
    assert goals(BoardFilter(states=frozenset({StepState.DONE}))) == [goal_c]
    both = frozenset({StepState.DONE, StepState.IN_PROGRESS})
    assert goals(BoardFilter(states=both)) == [goal_a, goal_b, goal_c]


async def test_titles_and_holders_are_escaped(make_core, tmp_path):
    client = await client_of(make_core, tmp_path / "tasks.db")
    _, (s1,) = await plan(client, HOSTILE, 1)
    await client.claim(s1, EVIL_HOLDER, LeasePolicy(300, True))
    log = ClaimLog()
    log.fold(await client.newest(1000))
    page = board_html(board_of(await client.tasks(), log, time.time()))
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page


async def other_process(db: Path, tool: str, *calls: dict) -> None:
    """Calls by another user, through an ollie-tasks process of its own."""
    server = McpServer(
        "other", command=sys.executable, args=["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
        env=THIS_TREE,
    )  # fmt: skip
    try:
        for args in calls:
            result = await server.call_tool(tool, args)
            assert not result.is_error, result.text
    finally:
        await server.aclose()


async def test_the_board_follows_another_process_at_a_bounded_rate(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db))
    client = core.servers.task_client
    _, ids = await plan(client, "Follow", 20)
    boards: list[Board] = []
    feed, watcher = board_feed(core.servers, BoardFilter(), boards.append)
    assert watcher is not None
    await feed.start(watcher)
    try:
        assert watcher.mode == "subscribed"
        first = feed.reads
        notes = [{"id": i, "note": f"note {n}"} for n in range(3) for i in ids]  # 60 events
        started = time.monotonic()
        await other_process(db, "task_update", *notes, {"id": ids[0], "status": "done"})
        elapsed = time.monotonic() - started

        def step_one_done() -> bool:
            return bool(boards) and boards[-1].plans[0].steps[0].state is StepState.DONE

        await until(step_one_done, what="the board shows step 1 done")
        reads = feed.reads - first
        assert 1 <= reads <= elapsed / feed.gap + 2, (reads, elapsed)  # coalesced, not 61
        times = [b.at for b in boards[1:]]  # nothing is claimed: every board is a read
        gaps = [later - sooner for sooner, later in itertools.pairwise(times)]
        assert all(gap >= feed.gap * 0.9 for gap in gaps), gaps  # at most 4 boards a second
    finally:
        await feed.stop()
