"""TaskClient.wait_answer wakes at the store's change signal (tasks://events), not at its
next look: an answer another process writes is seen within a fraction of the poll period.
Without signals it polls as before. A real ollie-tasks process on a real SQLite file."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.planning import TaskClient
from ollie_nb.planning._client import QUIET_LOOK
from ollie_nb.tasks import open_store
from ollie_nb.tasks._inbox import Inbox
from tests.support.agents import THIS_TREE, tasks_agent
from tests.support.waits import until

pytestmark = [pytest.mark.slow, pytest.mark.anyio]  # a real ollie-tasks process each

SLOW_POLL = 5.0  # s: a wait that polled would see the answer only this late


def unwatched(db) -> AgentConfig:
    """An agent on ollie-tasks whose watch of other processes' writes is off: it signals
    only the changes its own clients make."""
    args = ["-m", "ollie_nb.tasks", "serve", "--db", str(db), "--watch-interval", "0"]
    server = {"command": sys.executable, "args": args, "env": THIS_TREE}
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}})


async def client_counting_reads(
    make_core, db, *, signals: bool, agent: AgentConfig | None = None
) -> tuple[TaskClient, list[str]]:
    """A TaskClient of the core's ollie-tasks (following its signals, or not) and the list
    of the tools it called, growing as it calls them."""
    servers = (await make_core(agent=agent or tasks_agent(db))).servers
    wired = servers.task_client
    called: list[str] = []

    async def dispatch(server: str, tool: str, args: dict[str, Any]) -> Any:
        called.append(tool)
        return await servers.dispatcher.dispatch(server, tool, args)

    updates = wired.updates if signals else None  # the signals the core wired it with
    return TaskClient(dispatch, wired.server, wired.caps, updates=updates), called


async def answered_after_first_look(client, called, db, poll: float) -> tuple[Any, float]:
    """Ask, start waiting, answer from another connection once the waiter has looked:
    the row the wait returned and the seconds from the answer to the waiter's wakeup."""
    request = await client.ask("approval", "fetch url", "w1", timeout=60)
    waiter = asyncio.create_task(client.wait_answer(request, timeout=30, poll=poll))
    await until(lambda: called.count("task_inbox") >= 1, what="the waiter's first look")
    with open_store(db) as store:
        Inbox(store).answer(request, "allow", "ann")
        answered = time.monotonic()
    row = await waiter
    return row, time.monotonic() - answered


async def test_a_waiter_wakes_at_the_stores_signal_not_its_next_poll(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    client, called = await client_counting_reads(make_core, db, signals=True)
    row, latency = await answered_after_first_look(client, called, db, SLOW_POLL)
    assert row is not None and row.allowed and row.answered_by == "ann"
    print(f"answer to wakeup: {latency * 1000:.0f} ms")
    assert latency < SLOW_POLL / 2, f"woke {latency:.2f} s after the answer"


async def test_without_signals_a_waiter_polls(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    client, called = await client_counting_reads(make_core, db, signals=False)
    row, latency = await answered_after_first_look(client, called, db, 0.05)
    assert row is not None and row.allowed and called.count("task_inbox") >= 2
    assert latency < 2.0, f"woke {latency:.2f} s after the answer"  # a few looks at most


async def test_a_store_that_signals_nothing_is_looked_at_after_a_quiet_while(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    client, called = await client_counting_reads(make_core, db, signals=True, agent=unwatched(db))
    row, latency = await answered_after_first_look(client, called, db, SLOW_POLL)
    assert row is not None and row.allowed
    assert latency < QUIET_LOOK + 2, f"woke {latency:.2f} s after the answer"
