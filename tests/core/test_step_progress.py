"""A claimed step's progress: a parallel run's heartbeats (a kernel's, a headless worker's)
tell the store its spend and last tool call, a second client reads them back and the board
shows them; an older server's heartbeats go on as before and its board shows "–".

Real `ollie-tasks` server subprocesses on a real SQLite file (slow: they start processes).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import TASK_READ, Spend, StepProgress, read_step
from ollie_nb.planning._board import (
    BoardFilter,
    ClaimLog,
    Holding,
    board_html,
    board_of,
    holding_cells,
)
from ollie_nb.planning._client import LeasePolicy, TaskClient
from ollie_nb.tasks import open_store
from tests.core.test_parallel_plans import event_log
from tests.core.test_workers import agent_file, plan_in_store, start_worker
from tests.llm.test_openai import TEXT_REPLY
from tests.support.agents import FIXTURES, THIS_TREE, tasks_agent
from tests.support.llm_fake_provider import Recorded, Reply
from tests.support.obedient_model import OWN_STEP, calls_reply, model_env

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ONE = "One chore\n- Chore A (independent)"
HOSTILE = "<script>alert('x')</script>"
OLDER = FIXTURES / "tasks_older_heartbeat.py"


def reading_step(go_on: asyncio.Event):
    """The demo planner, whose step first reads its task, then waits for `go_on` to finish."""

    async def reply(messages, tools):
        last = messages[-1]
        if last.role == "user" and is_step_prompt(last.content):
            step = read_step(last.content)
            assert step is not None
            return [{"name": TASK_READ, "arguments": {"id": step.step_id}}]
        asked = next((m for m in reversed(messages) if m.role == "assistant"), None)
        if last.role == "tool" and asked and asked.tool_calls[0].name == TASK_READ:
            await asyncio.wait_for(go_on.wait(), 60)
            step = read_step(next(m.content for m in messages if m.role == "user"))
            assert step is not None
            return [{"name": "task_update", "arguments": {"id": step.step_id, "status": "done"}}]
        return demo_reply(messages, tools)

    return reply


async def client_of(make_core, db: Path, agent: AgentConfig | None = None) -> TaskClient:
    core = await make_core(agent=agent or tasks_agent(db))
    client = core.servers.task_client
    assert client is not None
    return client


async def holding(client: TaskClient, step: str, ready, within: float = 30.0) -> Holding:
    """The board's holding of `step` as `client` reads the store, once `ready(it)` holds."""
    deadline = time.monotonic() + within
    while True:
        log = ClaimLog()
        log.fold(await client.newest(1000))
        plans = board_of(await client.tasks(), log, time.time(), BoardFilter())
        held = next((p.holdings[step] for p in plans if step in p.holdings), None)
        if held is not None and ready(held):
            return held
        assert time.monotonic() < deadline, f"no such holding of {step} within {within} s: {held}"
        await asyncio.sleep(0.1)


async def renewals(client: TaskClient, step: str, count: int, within: float = 30.0) -> None:
    """Wait until `step`'s lease end has moved `count` times (each a heartbeat's renewal)."""
    ends: set[str] = set()
    deadline = time.monotonic() + within
    while len(ends) <= count:
        found = [t.lease_until for t in await client.tasks() if t.id == step and t.lease_until]
        ends.update(found)
        assert time.monotonic() < deadline, f"{len(ends) - 1} renewals of {step} in {within} s"
        await asyncio.sleep(0.05)


async def test_a_runs_heartbeats_tell_the_steps_spend_and_last_tool_to_another_client(
    make_core, tmp_path
):
    db, go_on = tmp_path / "tasks.db", asyncio.Event()
    core = await make_core(OfflineBackend(reading_step(go_on)), agent=tasks_agent(db, claimLease=1))
    await core.submit(ONE)
    step = core.plans[-1].ids[0]
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    other = await client_of(make_core, db)  # a second ollie-tasks process on the same file
    assert other.caps.progress
    held = await holding(other, step, lambda h: h.last_tool == TASK_READ)
    assert held.spend is not None and held.spend.tokens > 0 and held.holder
    with open_store(db, create=False) as store:  # as the store keeps them
        kept = store.get(step).progress
    assert kept is not None and (kept.tokens, kept.last_tool) == (held.spend.tokens, TASK_READ)
    cells = holding_cells(held)
    assert cells[-1] == TASK_READ and cells[-2].startswith(f"{held.spend.tokens:,} tokens")
    go_on.set()
    result = await asyncio.wait_for(run, 60)
    assert not result.failed, result.summary
    assert result.spend[step].tokens >= held.spend.tokens  # told so far, then the step's end
    kinds = [(kind, task) for _, kind, task, _ in event_log(db)]
    assert ("progress", step) in kinds


async def test_a_told_tool_name_is_bounded_and_escaped_on_the_board(make_core, tmp_path):
    client = await client_of(make_core, tmp_path / "tasks.db")
    goal = await client.create(title="Ship it")
    step = await client.create(title="step 1", parent=goal)
    lease = LeasePolicy(300, True)
    assert (await client.claim(step, "ollie@ab12/worker1", lease)).taken
    told = StepProgress(Spend(1234, 0.5), HOSTILE + "\x1b[31m" + "x" * 300)
    assert await client.renew(step, "ollie@ab12/worker1", lease, told) == ""
    held = await holding(client, step, lambda h: h.last_tool is not None)
    assert held.spend == Spend(1234, 0.5)
    assert held.last_tool is not None and held.last_tool.startswith(HOSTILE + "[31m")
    assert len(held.last_tool) == 100 and "\x1b" not in held.last_tool
    log = ClaimLog()
    log.fold(await client.newest(1000))
    page = board_html(board_of(await client.tasks(), log, time.time()))
    assert HOSTILE not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "1,234 tokens, $0.5000" in page


async def test_an_older_servers_heartbeats_renew_as_before_and_the_board_shows_dashes(
    make_core, tmp_path
):
    db, go_on = tmp_path / "tasks.db", asyncio.Event()
    server = {"command": sys.executable, "args": [str(OLDER), str(db)], "env": THIS_TREE}
    older = AgentConfig.from_dict({"mcpServers": {"tasks": server}, "claimLease": 1})
    core = await make_core(OfflineBackend(reading_step(go_on)), agent=older)
    client = core.servers.task_client
    assert client is not None and not client.caps.progress and client.caps.heartbeat
    await core.submit(ONE)
    step = core.plans[-1].ids[0]
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    held = await holding(client, step, lambda h: not h.lapsed)
    assert holding_cells(held)[-2:] == ("–", "–")
    await renewals(client, step, 3)  # the 1 s lease outlived: heartbeats as before
    go_on.set()
    result = await asyncio.wait_for(run, 60)
    assert not result.failed, result.summary
    kinds = [kind for _, kind, _, _ in event_log(db)]
    assert "lease_expired" not in kinds and "progress" not in kinds


def reading_then_done(go_on: threading.Event):
    """A chat model (OpenAI wire format) whose step reads its task, then, once `go_on` is
    set, marks it done."""

    def respond(request: Recorded) -> Reply:
        messages = request.body["messages"]
        prompt = next(str(m["content"]) for m in messages if m["role"] == "user")
        own = OWN_STEP.search(prompt)
        last = messages[-1]
        if own is None:
            return Reply(chunks=TEXT_REPLY)
        if last["role"] == "user":
            return calls_reply([(TASK_READ, {"id": own.group(1)})])
        asked = next(m for m in reversed(messages) if m["role"] == "assistant")
        if last["role"] == "tool" and asked["tool_calls"][0]["function"]["name"] == TASK_READ:
            assert go_on.wait(60)
            return calls_reply([("task_update", {"id": own.group(1), "status": "done"})])
        return Reply(chunks=TEXT_REPLY)

    return respond


async def test_a_headless_workers_heartbeats_tell_its_steps_progress(make_core, tmp_path, provider):
    db, go_on = tmp_path / "tasks.db", threading.Event()
    _goal, (step,) = plan_in_store(db, 1)
    provider.respond = reading_then_done(go_on)
    agent = agent_file(tmp_path, db, lease=1)
    worker = start_worker(tmp_path, agent, "w1", "--until-idle", model=model_env(provider))
    try:
        other = await client_of(make_core, db)
        held = await holding(other, step, lambda h: h.last_tool == TASK_READ)
        assert held.holder.startswith("w1") and held.spend is not None and held.spend.tokens > 0
    finally:
        go_on.set()
        _out, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err[-2000:]
    with open_store(db, create=False) as store:
        assert store.get(step).status == "done"
