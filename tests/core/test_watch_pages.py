"""The watch reads every event however large: seven notes of 16,000 characters on a task
(a page of them is bigger than the result cap) do not stop the next step being queued.

Real `ollie-tasks` server subprocesses on a real SQLite file; the other user writes
through a server process of its own.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import OfflineBackend
from ollie_nb.tools import McpServer

PROMPT = "Ship the report\n- Collect data\n- Clean data\n- Publish"
NOTE = 16_000


ROOT = Path(__file__).resolve().parents[2]


def tasks_agent(db: Path) -> AgentConfig:
    """An agent whose task server is this tree's ollie-tasks (MCP servers start with a
    minimal environment: PYTHONPATH says which ollie_nb they import)."""
    server = {
        "command": sys.executable,
        "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
        "env": {"PYTHONPATH": str(ROOT)},
    }
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}})


async def second_agent(db: Path, *calls: dict) -> None:
    """task_update calls by another user, through an ollie-tasks process of its own."""
    server = McpServer(
        "other", command=sys.executable, args=["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
        env={"PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        for args in calls:
            result = await server.call_tool("task_update", args)
            assert not result.is_error, result.text
    finally:
        await server.aclose()


async def until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s")
        await asyncio.sleep(0.02)


def _flood_then_finish_step_1(tmp_path: Path, prepare: Callable[[AgentCore], None]):
    """Plan, watch, then another user writes seven 16,000-character notes on the goal and
    marks step 1 done: return the plan's ids, what was queued, the watch's log and mode."""
    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(), agent=tasks_agent(db), workdir=tmp_path)

    async def scenario():
        async with core:
            await core.submit(PROMPT)
            record = core.plans[-1]
            ids = list(record.ids)
            await core.servers.dispatcher.dispatch(
                "tasks", "task_update", {"id": ids[0], "status": "in_progress"}
            )
            prepare(core)
            watcher = await core.watch.start(interval=0.2, wake=False)
            notes = [{"id": record.goal_id, "note": str(i) * NOTE} for i in range(7)]
            await second_agent(db, *notes, {"id": ids[0], "status": "done"})
            await until(lambda: len(core.prompts.texts) == 1)
            log, mode = list(watcher.log), watcher.mode
            queued = list(core.prompts.texts)  # read before the watch goes off: it takes them back
            await core.watch.stop()
            return ids, queued, log, mode

    return asyncio.run(scenario())


def test_seven_16000_character_notes_do_not_stall_the_watch(tmp_path):
    ids, queued, log, mode = _flood_then_finish_step_1(tmp_path, lambda core: None)
    assert mode == "subscribed"
    assert queued[0].startswith(f"Step 2 of 3 [task {ids[1]}]")
    assert not any("could not read" in line or "skipped" in line for line in log), log


def test_a_page_cut_by_the_cap_is_read_again_smaller(tmp_path):
    """A result cap of 20,000 characters cuts every page of two or more of these events:
    the watch asks again for fewer until one parses, and still queues step 2."""

    def small_cap(core: AgentCore) -> None:
        core.servers.dispatcher.result_cap = 20_000

    ids, queued, log, _ = _flood_then_finish_step_1(tmp_path, small_cap)
    assert queued[0].startswith(f"Step 2 of 3 [task {ids[1]}]")
    assert not any("skipped" in line for line in log), log


def test_a_server_offering_no_subscription_is_polled(tmp_path):
    def no_subscriptions(core: AgentCore) -> None:
        core.servers.dispatcher.get_server("tasks").resource_updates = None

    ids, queued, _, mode = _flood_then_finish_step_1(tmp_path, no_subscriptions)
    assert mode == "polling"
    assert queued[0].startswith(f"Step 2 of 3 [task {ids[1]}]")


def test_a_2025_protocol_server_is_subscribed_through_resources_subscribe(tmp_path):
    async def legacy(core: AgentCore) -> None:
        server = core.servers.dispatcher.get_server("tasks")
        server.mode = "legacy"  # a 2025-11-25 session: resources/subscribe, no listen
        await server.connect()

    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(), agent=tasks_agent(db), workdir=tmp_path)

    async def scenario():
        async with core:
            await core.submit(PROMPT)
            ids = list(core.plans[-1].ids)
            await core.servers.dispatcher.dispatch(
                "tasks", "task_update", {"id": ids[0], "status": "in_progress"}
            )
            await legacy(core)
            watcher = await core.watch.start(interval=30, wake=False)  # no poll in time
            await second_agent(db, {"id": ids[0], "status": "done"})
            try:
                await until(lambda: len(core.prompts.texts) == 1)
            except AssertionError:
                raise AssertionError(list(watcher.log)) from None
            mode, queued = (
                watcher.mode,
                list(core.prompts.texts),
            )  # before the watch takes them back
            await core.watch.stop()
            return ids, mode, queued

    ids, mode, queued = asyncio.run(scenario())
    assert mode == "subscribed"
    assert queued[0].startswith(f"Step 2 of 3 [task {ids[1]}]")


def test_one_read_of_the_events_follows_the_pages_to_the_end(tmp_path):
    """Seven 16,000-character notes make several pages: one poll reads them all."""
    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(), agent=tasks_agent(db), workdir=tmp_path)

    async def scenario():
        async with core:
            await core.submit(PROMPT)
            goal = core.plans[-1].goal_id
            watcher = await core.watch.start(wake=False)
            await watcher.stop()  # no reads on signals from here: only the poll below
            before = watcher.seq
            await second_agent(db, *({"id": goal, "note": str(i) * NOTE} for i in range(7)))
            await watcher.poll()
            return before, watcher.seq

    before, after = asyncio.run(scenario())
    with sqlite3.connect(db) as conn:
        (last,) = conn.execute("SELECT max(seq) FROM events").fetchone()
    assert after == last and last - before == 7
