"""Sub-agents: child sessions spawned by the `subagent_*` tools, on the parent's loop and servers.

The model is the offline backend driven by a function that answers the parent and
each child (a child's system prompt names it); the tools run for real.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from ollie_nb.core import AgentConfig, AgentCore, UsageReported
from ollie_nb.core._history import INTERRUPTED_NOTE
from ollie_nb.llm import Message, OfflineBackend, ToolCall
from tests.support.waits import until


def call(tool: str, **args) -> ToolCall:
    return ToolCall(f"c-{tool}-{json.dumps(args, sort_keys=True)}", tool, json.dumps(args))


def child_of(messages: list[Message]) -> str:
    """The child a conversation belongs to ('' for the parent)."""
    system = messages[0].content
    marker = "You are sub-agent '"
    return system.split(marker, 1)[1].split("'", 1)[0] if marker in system else ""


def scripted(parent_calls: list[list[ToolCall]], child_delay: float = 0.0):
    """The parent makes these calls, one batch per request, then replies 'parent done'."""

    async def reply(messages, tools):
        name = child_of(messages)
        if name:
            await asyncio.sleep(child_delay)
            return f"{name} did: {messages[-1].content}"
        step = sum(1 for m in messages if m.role == "assistant")
        if step < len(parent_calls):
            return Message.assistant("", tuple(parent_calls[step]))
        return "parent done"

    return reply


def tool_results(core: AgentCore) -> list[str]:
    return [m.content for m in core.session.history if m.role == "tool"]


@pytest.mark.anyio
async def test_spawn_and_wait_return_the_childrens_replies_and_notes_reach_the_parent(make_core):
    calls = [
        [
            call("subagent_spawn", name="a", prompt="count apples"),
            call("subagent_spawn", name="b", prompt="count pears"),
        ],
        [call("subagent_wait", names=["a", "b"], timeout=10)],
    ]
    core = await make_core(OfflineBackend(scripted(calls, 0.05)))
    events: list = []
    result = await core.submit("fan out", events.append)
    queued, children = core.prompts.texts, dict(core.subagents.children)
    assert result.reply == "parent done"
    spawned_a, _spawned_b, waited = tool_results(core)
    assert spawned_a == "sub-agent a started; you will be told when it finishes"
    assert "a: done: a did: count apples" in waited
    assert "b: done: b did: count pears" in waited
    # subagent_wait handed the replies over, so their completion notes were taken back
    assert not queued
    users = [m.content for m in core.session.history if m.role == "user"]
    assert users == ["fan out"]
    # each child has its own history and usage; the parent's tools stay the parent's
    assert [m.role for m in children["a"].history] == ["user", "assistant"]
    assert children["a"].usage.requests == 1
    assert all(not d.name.startswith("subagent_") for d in children["a"].context().router.defs)
    # the session counts every request its children made: the parent's 3 and one each
    session = core.session.usage
    assert session.requests == 3 + 2
    reports = [e for e in events if isinstance(e, UsageReported)]
    own = sum(e.input_tokens + e.output_tokens for e in reports)
    spent = sum(c.usage.input_tokens + c.usage.output_tokens for c in children.values())
    assert session.input_tokens + session.output_tokens == own + spent and spent > 0
    assert session.last_input_tokens == reports[-1].input_tokens  # its own context's size


@pytest.mark.anyio
async def test_without_a_wait_the_completion_notes_are_worked_as_turns_after_the_parents(
    make_core,
):
    calls = [[call("subagent_spawn", name="a", prompt="count apples")]]
    core = await make_core(OfflineBackend(scripted(calls, 0.05)))
    first = await core.submit("fan out")  # ends before the child does
    await core.subagents.wait(["a"], 5)
    noted = await core.run_queue()
    assert first.reply == "parent done"
    users = [m.content for m in core.session.history if m.role == "user"]
    assert users == ["fan out", "sub-agent a finished: a did: count apples"]
    assert noted is not None and not noted.error


@pytest.mark.anyio
async def test_bad_subagent_calls_get_clear_errors_and_the_turn_goes_on(make_core):
    calls = [
        [call("subagent_wait", names=[], timeout=1)],
        [call("subagent_spawn", name="a", prompt="   ")],
        [call("subagent_spawn", name="a", prompt="work")],
        [call("subagent_spawn", name="a", prompt="again")],
        [call("subagent_spawn", name="b", prompt="over the limit")],
        [call("subagent_send", name="zed", prompt="hello")],
        [call("subagent_spawn", name="bad name!", prompt="x")],
        [call("subagent_wait", names=["a"], timeout=10)],
    ]
    agent = AgentConfig.from_dict({"maxParallel": 1})
    core = await make_core(OfflineBackend(scripted(calls, 0.2)), agent=agent)
    result = await core.submit("try everything")
    assert result.reply == "parent done" and not result.error
    results = tool_results(core)
    assert results[0] == "error: there are no sub-agents to wait for; spawn one first"
    assert results[1] == "error: the prompt is empty; say what the sub-agent should do"
    assert results[2].startswith("sub-agent a started")
    assert results[3] == "error: a sub-agent named 'a' exists already; use subagent_send"
    assert results[4].startswith("error: 1 sub-agents are running already (maxParallel 1)")
    assert results[5] == "error: no sub-agent named 'zed' (sub-agents: a)"
    assert results[6].startswith("error: bad sub-agent name 'bad name!'")
    assert results[7] == "a: done: a did: work"


@pytest.mark.anyio
async def test_interrupting_the_parent_interrupts_every_child_and_histories_stay_whole(make_core):
    calls = [
        [
            call("subagent_spawn", name="a", prompt="slow work"),
            call("subagent_spawn", name="b", prompt="slow work"),
        ],
        [call("subagent_wait", timeout=60)],
    ]
    inside: list[str] = []  # the children now waiting on their model call
    model = scripted(calls, 30)

    async def reply(messages, tools):
        if child_of(messages):
            inside.append(child_of(messages))
        return await model(messages, tools)

    core = await make_core(OfflineBackend(reply))
    turn = asyncio.ensure_future(core.submit("fan out"))
    await until(lambda: sorted(inside) == ["a", "b"], what="both children at work")
    assert core.interrupt()
    result = await asyncio.wait_for(turn, 2)
    await asyncio.wait_for(core.subagents.wait([], 2), 3)
    await core.aclose()  # closing the core changes none of what follows
    assert result.interrupted
    for child in core.subagents.children.values():
        assert child.status == "interrupted" and not child.busy
        assert child.history[-1].content == INTERRUPTED_NOTE
    assert core.session.history[-1].role == "assistant"
    answered = {m.tool_call_id for m in core.session.history if m.role == "tool"}
    asked = {c.id for m in core.session.history for c in m.tool_calls}
    assert asked == answered
    # the parent is told of each interruption
    assert sorted(core.prompts.texts) == [
        "sub-agent a was interrupted",
        "sub-agent b was interrupted",
    ]


@pytest.mark.anyio
async def test_a_childs_tool_outside_trusted_tools_asks_the_parents_approver(make_core, tmp_path):
    """The user is asked about a sub-agent's call as about the parent's, and the answer holds."""
    asked: list[tuple[str, dict]] = []
    answers = iter([True, False])

    def approve(name, args):
        asked.append((name, args))
        return next(answers)

    def touch(name: str) -> ToolCall:
        code = f"touch {tmp_path / name}"
        return ToolCall(f"x-{name}", "execute_code", json.dumps({"code": code}))

    async def reply(messages, tools):
        name = child_of(messages)
        if name and messages[-1].role == "user":
            return Message.assistant("", (touch(name),))
        if name:
            return f"{name}: {messages[-1].content.splitlines()[0]}"
        step = sum(1 for m in messages if m.role == "assistant")
        if step == 0:
            return Message.assistant("", (call("subagent_spawn", name="allowed", prompt="go"),))
        if step == 1:
            return Message.assistant("", (call("subagent_wait", names=["allowed"], timeout=20),))
        if step == 2:
            return Message.assistant("", (call("subagent_spawn", name="denied", prompt="go"),))
        if step == 3:
            return Message.assistant("", (call("subagent_wait", names=["denied"], timeout=20),))
        return "parent done"

    config = AgentConfig.from_dict({"trustedTools": ["subagent_*"]})
    core = await make_core(OfflineBackend(reply), agent=config, approve=approve)
    await core.submit("fan out")
    assert [name for name, _ in asked] == ["execute_code", "execute_code"]
    assert asked[0][1] == {"code": f"touch {tmp_path / 'allowed'}"}
    assert (tmp_path / "allowed").exists() and not (tmp_path / "denied").exists()
    denied = core.subagents.children["denied"].history
    (result, *_) = [m.content for m in denied if m.role == "tool"]
    assert "was not approved; it did not run" in result


@pytest.mark.anyio
async def test_a_flood_of_sends_is_refused_per_child_and_per_turn(make_core):
    """Issue 23.7: one parent step queued 2,000 prompts for a child, which worked 2,001 turns
    while the parent's maxSteps was 2. A child's queue and a turn's hand-outs are bounded."""
    from ollie_nb.core._subagents import MAX_QUEUED, MAX_TURN_STARTS

    flood = [call("subagent_send", name="a", prompt=f"item {i}") for i in range(200)]
    others = [call("subagent_spawn", name=f"w{i}", prompt="go") for i in range(MAX_TURN_STARTS)]
    calls = [[call("subagent_spawn", name="a", prompt="start")], flood, others]
    config = AgentConfig.from_dict({"maxSteps": 4, "maxParallel": MAX_TURN_STARTS + 2})
    core = await make_core(OfflineBackend(scripted(calls, 0.2)), agent=config)
    await core.submit("flood a child")
    await core.subagents.wait([], 60)
    turns = core.subagents.get("a").turns
    results = tool_results(core)
    sends = results[1 : 1 + len(flood)]
    refused = [r for r in sends if "prompts waiting already" in r]
    assert refused and f"(at most {MAX_QUEUED})" in refused[0]
    assert turns <= 1 + MAX_QUEUED + 1  # the first prompt, a full queue, one taken meanwhile
    over = [r for r in results if f"handed {MAX_TURN_STARTS} prompts to sub-agents" in r]
    assert over  # the spawns after the turn's budget are refused with a reason
    assert len(core.subagents.children) < 1 + MAX_TURN_STARTS


@pytest.mark.anyio
async def test_each_parent_turn_gets_its_own_budget_of_sub_agent_prompts(make_core, monkeypatch):
    from ollie_nb.core import _subagents

    monkeypatch.setattr(_subagents, "MAX_TURN_STARTS", 2)
    batches = [
        [call("subagent_spawn", name=f"a{i}", prompt="go") for i in range(3)],
        None,  # the first turn ends
        [call("subagent_spawn", name="b0", prompt="go")],
        None,
    ]

    async def reply(messages, tools):
        if child_of(messages):
            return "child done"
        batch = batches.pop(0) if batches else None
        return Message.assistant("", tuple(batch)) if batch else "parent done"

    core = await make_core(OfflineBackend(reply))
    await core.submit("spawn three")
    await core.submit("spawn one more")
    await core.subagents.wait([], 30)
    results = tool_results(core)
    assert "handed 2 prompts to sub-agents already" in results[2]
    assert sorted(core.subagents.children) == ["a0", "a1", "b0"]
