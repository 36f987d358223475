"""Event-driven planning: a step that becomes ready on ollie-tasks is queued and worked."""

from __future__ import annotations

import asyncio
import sqlite3
import sys

import pytest

from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import OfflineBackend

PROMPT = "Ship the report\n- Collect data\n- Clean data\n- Publish"


def tasks_agent(db) -> AgentConfig:
    return AgentConfig.from_dict(
        {
            "mcpServers": {
                "tasks": {
                    "command": sys.executable,
                    "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
                }
            }
        }
    )


def statuses(db) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT title, status FROM tasks"))


def test_ready_steps_are_queued_and_the_offline_model_works_them(tmp_path):
    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(), agent=tasks_agent(db), workdir=tmp_path)

    async def scenario():
        async with core:
            await core.submit(PROMPT)
            record = core.plans[-1]
            watcher = await core.start_watching(interval=0.1)
            assert await watcher.poll() == []  # history before the watch is not replayed
            dispatch = core.env.dispatcher.dispatch
            # someone else finishes step 1: step 2 becomes ready and is queued
            await dispatch("tasks", "task_update", {"id": record.ids[0], "status": "done"})
            for _ in range(50):
                if core.queued:
                    break
                await asyncio.sleep(0.05)
            queued = list(core.queued)
            log = list(watcher.log)
            events = []
            # the agent works the ready step; before the turn calls the queue empty it reads
            # the events again, finds step 3 ready, and works it too
            await core.run_queue(events.append)
            return record, queued, log, events

    record, queued, log, events = asyncio.run(scenario())
    assert queued == [
        f"Step 2 of 3 [task {record.ids[1]}]: Clean data\n"
        "(ready now: every step it waits for is done; plan: Ship the report)"
    ]
    assert f"step 1 of plan 1 is done ({record.ids[0]})" in log
    assert f"step 2 of plan 1 is ready ({record.ids[1]}); queued" in log
    worked = [
        e.data["args"]["id"] for e in events if e.kind == "call" and e.data["tool"] == "task_update"
    ]
    assert worked == [record.ids[1], record.ids[2]]
    starts = [e.text for e in events if e.kind == "turn_start"]
    assert starts[1].startswith(f"Step 3 of 3 [task {record.ids[2]}]: Publish")
    assert statuses(db) == {
        "Ship the report": "done",  # closed by ollie-tasks with its last step
        "Collect data": "done",
        "Clean data": "done",
        "Publish": "done",
    }


def test_watching_needs_a_task_server_with_events(tmp_path):
    core = AgentCore(OfflineBackend(), workdir=tmp_path)

    async def scenario():
        async with core:
            with pytest.raises(RuntimeError, match="no task server is wired"):
                await core.start_watching()
            assert await core.run_queue() is None

    asyncio.run(scenario())
