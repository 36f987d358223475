"""The plan is shown to the model again every `planReminder` tool rounds while steps are open,
on the round's last tool result: no message the model saw before changes (cache friendly)."""

from __future__ import annotations

from typing import Any

import pytest

from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.core._reminder import REMINDER_HEAD
from ollie_nb.llm import Message, OfflineBackend

PLAN = {"goal": "Ship the report", "steps": [{"title": "Collect data"}, {"title": "Draw charts"}]}
THINK = {"name": "reasoning_think", "arguments": {"thought": "next"}}


class Recorder:
    """A scripted model that keeps every request's messages."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.requests: list[list[Message]] = []

    def __call__(self, messages: list[Message], tools: list[Any]) -> Any:
        self.requests.append(list(messages))
        step = self.script[len(self.requests) - 1]
        return step() if callable(step) else step


async def run(core: AgentCore) -> None:
    result = await core.submit("Make a plan, then work it")
    assert not result.error, result.error


def reminded_rounds(core: AgentCore) -> list[int]:
    """The tool rounds (1-based) whose last tool result carries the reminder."""
    rounds, n = [], 0
    for i, message in enumerate(core.session.history):
        last_of_round = message.role == "tool" and (
            i + 1 == len(core.session.history) or core.session.history[i + 1].role != "tool"
        )
        if last_of_round:
            n += 1
            if REMINDER_HEAD in message.content:
                rounds.append(n)
    return rounds


@pytest.mark.anyio
async def test_open_plan_is_recalled_every_n_rounds_without_editing_history(make_core):
    plan_call = [{"name": "reasoning_plan", "arguments": PLAN}]
    model = Recorder([plan_call, [THINK], [THINK], [THINK, THINK], "done"])
    agent = AgentConfig.from_dict({"planReminder": 2})
    core = await make_core(OfflineBackend(model), agent=agent)
    await run(core)
    assert reminded_rounds(core) == [2, 4]
    reminder = core.session.history[-2].content  # the last result of round 4 (two calls)
    assert "Plan: Ship the report" in reminder and "2. Draw charts" in reminder
    assert REMINDER_HEAD not in core.session.history[-3].content  # the round's first result
    for before, after in zip(model.requests, model.requests[1:]):
        assert after[: len(before)] == before  # each request extends the last one unchanged


@pytest.mark.anyio
async def test_no_reminder_once_every_step_is_done(make_core, ollie_tasks):
    servers, _ = ollie_tasks()
    core_box: list[AgentCore] = []

    def close_all() -> list[dict]:
        ids = core_box[0].plans[-1].ids
        return [{"name": "task_update", "arguments": {"id": i, "status": "done"}} for i in ids]

    plan_call = [{"name": "reasoning_plan", "arguments": PLAN}]
    model = Recorder([plan_call, close_all, [THINK], "done"])
    agent = AgentConfig.from_dict({"mcpServers": servers, "planReminder": 1})
    core = await make_core(OfflineBackend(model), agent=agent)
    core_box.append(core)
    await run(core)
    assert core.plans[-1].kind == "tasks"
    assert reminded_rounds(core) == [1]  # open after the plan; all done after round 2
    first = next(m.content for m in core.session.history if m.role == "tool")
    assert "Step states: 1 open, 2 open." in first


@pytest.mark.anyio
async def test_plan_reminder_zero_turns_it_off(make_core):
    plan_call = [{"name": "reasoning_plan", "arguments": PLAN}]
    model = Recorder([plan_call, [THINK], "done"])
    agent = AgentConfig.from_dict({"planReminder": 0})
    core = await make_core(OfflineBackend(model), agent=agent)
    await run(core)
    assert reminded_rounds(core) == []


def test_plan_reminder_key_is_checked():
    assert AgentConfig.from_dict({}).plan_reminder == 10
    assert AgentConfig.from_dict({"planReminder": 0}).plan_reminder == 0
    try:
        AgentConfig.from_dict({"planReminder": -1})
    except Exception as exc:
        assert "planReminder" in str(exc)
    else:
        raise AssertionError("a negative planReminder was accepted")
