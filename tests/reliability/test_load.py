"""Load: a 1,000-step plan on the real task server drawn as a graph; 200 queued prompts."""

from __future__ import annotations

import asyncio
import json
import time
import xml.etree.ElementTree as ET

import pytest

from ollie_nb.core import AgentConfig, AgentCore, TurnEnded, TurnStarted
from ollie_nb.core._sessions import load_session
from ollie_nb.llm import OfflineBackend, ToolCall
from ollie_nb.planning import plan_svg
from tests.support.agents import assert_consistent
from tests.support.task_db import snapshot, task_server

STEPS = 1000
SVG = "{http://www.w3.org/2000/svg}"


def thousand_steps() -> list[dict]:
    """Ten layers of 100: step i waits for i - 100, and every 7th also for i - 150."""
    steps = []
    for i in range(STEPS):
        after = [i - 100] if i >= 100 else []
        if i >= 150 and i % 7 == 0:
            after.append(i - 150)
        steps.append({"title": f"step {i:04d}", "body": f"do part {i}", "after": after})
    return steps


@pytest.mark.slow
@pytest.mark.anyio
async def test_thousand_step_plan_on_the_task_server_and_its_graph(tmp_path):
    db = tmp_path / "tasks.db"
    steps = thousand_steps()
    plan = json.dumps({"goal": "A thousand steps", "steps": steps})
    core = AgentCore(
        OfflineBackend(turns=[[ToolCall("big", "reasoning_plan", plan)], "planned"]),
        agent=AgentConfig.from_dict({"mcpServers": task_server(db, timeout=30)}),
        workdir=tmp_path,
    )

    async def scenario():
        async with core:
            started = time.perf_counter()
            result = await core.submit("plan a thousand steps")
            persisted = time.perf_counter() - started
            record = core.plans[-1]
            statuses = await core.plans.statuses(record)
            return result, record, statuses, persisted

    result, record, statuses, persisted = await scenario()
    assert result.reply == "planned"
    assert record.persisted, record.status
    assert len(record.ids) == len(set(record.ids)) == STEPS
    print(f"1000-step plan persisted in {persisted:.2f} s")

    snap = snapshot(db)
    assert len(snap.tasks) == STEPS + 1
    goal = record.goal_id
    assert snap.tasks[goal] == ("A thousand steps", "", "open")
    children = snap.children(goal)
    assert len(children) == STEPS
    assert [children[s["title"]] for s in steps] == list(record.ids)  # ids in step order
    want = {(record.ids[i], record.ids[j]) for i, s in enumerate(steps) for j in s["after"]}
    assert snap.deps == want
    assert len(want) == 900 + sum(1 for i in range(150, STEPS) if i % 7 == 0)

    # statuses came back for every step: one task_list (cut at 500 lines), task_read for the rest
    assert len(statuses) == STEPS and set(statuses.values()) == {"open"}

    started = time.perf_counter()
    svg = plan_svg(record.goal, record.steps, record.ids, statuses, goal_id=goal, expand=True)
    print(f"plan_svg of 1000 steps: {time.perf_counter() - started:.2f} s")
    root = ET.fromstring(svg)
    nodes = [g for g in root.iter(f"{SVG}g") if "plan-step" in (g.get("class") or "").split()]
    assert len(nodes) == STEPS
    classes = [g.get("class") for g in nodes]
    assert classes.count("node plan-step status-todo") == 100  # the first layer
    assert classes.count("node plan-step status-blocked") == 900
    titles = {g.find(f"{SVG}title").text for g in nodes}
    assert titles == {f"s{i}" for i in range(STEPS)}
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert len(edges) == len(want) + 100  # blocker edges, plus goal -> first-layer steps


@pytest.mark.anyio
async def test_two_hundred_queued_prompts_drain_in_order(tmp_path):
    def model(messages, tools):
        return f"done: {messages[-1].content.split()[-1]}"

    core = AgentCore(OfflineBackend(model), workdir=tmp_path)
    prompts = [f"prompt {n:03d}" for n in range(200)]
    late = [f"late {n:03d}" for n in range(10)]

    async def scenario():
        async with core:
            for prompt in prompts[1:]:
                core.prompts.put(prompt)
            events: list = []
            queued_late: list = []

            def sink(event):
                events.append(event)
                if isinstance(event, TurnEnded) and len(queued_late) == 0 and len(events) > 300:
                    queued_late.append(True)
                    for prompt in late:  # submitted while the queue drains: queued at its end
                        asyncio.get_running_loop().create_task(core.submit(prompt))

            started = time.perf_counter()
            result = await core.submit(prompts[0], sink)
            return result, events, time.perf_counter() - started

    result, events, seconds = await scenario()
    print(f"210 queued turns in {seconds:.2f} s")
    starts = [e for e in events if isinstance(e, TurnStarted)]
    assert [e.prompt for e in starts] == prompts + late
    assert [e.queued for e in starts] == [False] + [True] * 209
    assert [e.position for e in starts[1:4]] == [1, 2, 3]
    ends = [e for e in events if isinstance(e, TurnEnded)]
    assert [e.reply for e in ends] == [f"done: {p.split()[-1]}" for p in prompts + late]
    assert result.reply == "done: 009" and not result.interrupted
    assert core.prompts.texts == []
    assert core.session.usage.requests == 210
    roles = [m.role for m in core.session.history]
    assert roles == ["user", "assistant"] * 210
    assert [m.content for m in core.session.history[::2]] == prompts + late
    assert_consistent(core.session.history)
    saved = load_session(core.session.session_id)
    assert len(saved.history) == 420
