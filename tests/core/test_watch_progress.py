"""A step the watch claimed for the agent's own turn tells the store its progress with each
heartbeat, as a parallel run's steps do: what the turn spent so far and the last tool it
called (real ollie-tasks and SQLite; the offline planner, a step turn that thinks first)."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from ollie_nb.llm import OfflineBackend, ToolCall
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import StepState
from tests.support.agents import tasks_agent
from tests.support.waits import until

pytestmark = pytest.mark.slow  # an ollie-tasks subprocess


async def thinks_then_works(messages, tools):
    """On a step: think (a tool call), work on for 2 s (heartbeats go out), then the planner."""
    last = messages[-1]
    if last.role == "user" and is_step_prompt(last.content):
        return [ToolCall("think-1", "reasoning_think", json.dumps({"thought": "first, think"}))]
    if last.role == "tool" and last.name == "reasoning_think":
        await asyncio.sleep(2.0)
        prompt = next(m for m in reversed(messages) if m.role == "user")
        return demo_reply([*messages[: messages.index(prompt) + 1]], tools)
    return demo_reply(messages, tools)


def progress(db, task: str) -> tuple:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT progress_tokens, progress_tool FROM tasks WHERE id = ?", (task,)
        ).fetchone()


@pytest.mark.anyio
async def test_a_watched_steps_heartbeats_tell_its_spend_and_last_tool(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(thinks_then_works)
    core = await make_core(backend, agent=tasks_agent(db, claimLease=0.6), name="carol")
    await core.submit("One chore\n- Sweep")
    step = core.plans[-1].ids[0]
    await core.watch.start()
    await until(lambda: (progress(db, step) or (0, ""))[1], timeout=30, what="a told tool")
    tokens, tool = progress(db, step)
    assert tool == "reasoning_think" and tokens > 0
    await core.watch.until_idle(60)
    await core.watch.stop()
    assert await core.servers.task_client.read(step) is StepState.DONE
