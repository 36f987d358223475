"""AgentCore turns driven by the offline model, with real MCP servers, hooks and sessions."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys

import pytest

from ollie_nb.core import (
    AgentConfig,
    Notice,
    PlanMade,
    ServerState,
    SessionError,
    TextDelta,
    ToolCalled,
    ToolFinished,
    TurnEnded,
    TurnResult,
    TurnStarted,
    list_sessions,
)
from ollie_nb.llm import Message, OfflineBackend, ToolCall
from tests.support.agents import assert_consistent
from tests.support.waits import until

LIST_PROMPT = "Ship the report\n- Collect data\n- Clean data\n- Draw charts (after 2)\n- Publish"


def allow(name, args):
    """The user's answer to every approval request in these tests: yes."""
    return True


def call(name, args, call_id="c1"):
    return ToolCall(call_id, name, args if isinstance(args, str) else json.dumps(args))


def kinds(events):
    return [type(e) for e in events]


async def run_core(core, *prompts):
    events = []
    results = []
    async with core:
        for prompt in prompts:
            results.append(await core.submit(prompt, events.append))
    return results, events


@pytest.mark.anyio
async def test_offline_plan_persisted_on_task_server(make_core, ollie_tasks, db_tasks, tmp_path):
    servers, db = ollie_tasks()
    core = await make_core(
        agent=AgentConfig.from_dict({"mcpServers": servers}), autosave=True, start=False
    )
    (result,), events = await run_core(core, LIST_PROMPT)
    assert PlanMade in kinds(events)
    record = next(e.record for e in events if isinstance(e, PlanMade))
    assert record.persisted and len(record.ids) == 4
    tasks = db_tasks(db)
    assert len(tasks) == 5
    assert [tasks[i]["title"] for i in record.ids] == [
        "Collect data",
        "Clean data",
        "Draw charts",
        "Publish",
    ]
    assert all(tasks[i]["parent"] == record.goal_id for i in record.ids)
    assert tasks[record.ids[2]]["blockers"] == [record.ids[1]]
    assert result.reply and not result.interrupted
    assert_consistent(core.session.history)
    assert kinds(events)[0] is TurnStarted and kinds(events)[-1] is TurnEnded
    assert core.session.usage.requests == 2 and core.session.usage.input_tokens > 0


@pytest.mark.anyio
async def test_queue_fallback_drains_one_turn_per_step(make_core, tmp_path):
    core = await make_core(queue_fallback=True, autosave=True, start=False)
    (result,), events = await run_core(core, LIST_PROMPT)
    starts = [e for e in events if isinstance(e, TurnStarted)]
    assert len(starts) == 5  # the list prompt, then the four queued steps
    assert [(e.position, e.total) for e in starts[1:]] == [
        (1, 4),
        (2, 4),
        (3, 4),
        (4, 4),
    ]
    assert starts[1].prompt.startswith("Goal: Ship the report\n\nStep 1 of 4 [q1]: Collect data")
    assert "(after: q2)" in starts[3].prompt
    assert [(e.queued, e.step.step_id if e.step else "") for e in starts] == [(False, "")] + [
        (True, f"q{n}") for n in range(1, 5)
    ]
    assert core.prompts.texts == []
    tool_text = next(e.result for e in events if isinstance(e, ToolFinished))
    assert "Plan queued (4 steps). Stop here" in tool_text
    assert_consistent(core.session.history)
    assert not result.interrupted


@pytest.mark.anyio
async def test_bad_tool_calls_become_error_results(make_core, tmp_path):
    turns = [
        [
            call("no_such_tool", {}, "a"),
            ToolCall("b", "", "{}"),
            call("reasoning_think", '{"thought": "unterminated', "c"),
            call("reasoning_think", "[1, 2]", "d"),
            call("reasoning_plan", {"goal": "g", "steps": "x"}, "e"),
        ],
        "done",
    ]
    core = await make_core(OfflineBackend(turns=turns), autosave=True, start=False)
    (result,), events = await run_core(core, "go")
    results = {e.id: e.result for e in events if isinstance(e, ToolFinished)}
    assert results["a"].startswith("error: unknown tool 'no_such_tool'; available tools:")
    assert results["b"] == "error: the tool call has no name; call one of the offered tools"
    assert "not valid JSON (Unterminated string" in results["c"]
    assert "must be a JSON object, got list" in results["d"]
    assert "'steps' must be a list" in results["e"]
    assert result.reply == "done"
    assert_consistent(core.session.history)


@pytest.mark.anyio
async def test_max_steps_stops_a_looping_model_and_run_continues(make_core, tmp_path):
    def model(messages, tools):
        if "step limit" in messages[-1].content:
            return "continued and done"
        return [call("reasoning_think", {"thought": "t"})]

    core = await make_core(OfflineBackend(model), agent=AgentConfig(max_steps=3), autosave=True)
    events = []
    first = await core.submit("loop", events.append)
    limited = core.turns.step_limited
    second = await core.run_queue(events.append)
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert (
        "stopped: this turn reached maxSteps (3 model calls); "
        "send a prompt or `%ollie run` to continue"
    ) in notes
    assert first.step_limit and limited and first.steps == 3
    assert second.reply == "continued and done" and not core.turns.step_limited
    assert core.session.usage.requests == 4
    assert_consistent(core.session.history)


def test_max_steps_default_is_high_not_fifty():
    assert AgentConfig().max_steps == 200
    assert AgentConfig.from_dict({}).max_steps == 200


@pytest.mark.anyio
async def test_inject_reaches_the_model_in_the_next_tool_result(
    make_core, fake_task_server, tmp_path
):
    turns = [[call("slow", {"seconds": 0.5})], "ok"]
    core = await make_core(
        OfflineBackend(turns=turns),
        agent=AgentConfig.from_dict({"mcpServers": fake_task_server()}),
        approve=allow,
        autosave=True,
    )
    events = []

    def sink(event):
        events.append(event)
        if isinstance(event, ToolCalled):
            core.turns.inject("also check the totals")

    await core.submit("work", sink)
    tool_message = next(m for m in core.session.history if m.role == "tool")
    assert tool_message.content.startswith("slept 0.5")
    assert tool_message.content.endswith("[user interruption] also check the totals")


@pytest.mark.anyio
async def test_inject_when_idle_becomes_the_next_prompt(make_core, tmp_path):
    received = []

    def model(messages, tools):
        received.append([(m.role, m.content) for m in messages[1:]])
        return f"reply {len(received)}"

    core = await make_core(OfflineBackend(model), autosave=True)
    core.turns.inject("first")
    queued = core.prompts.texts
    result = await core.run_queue()
    left = core.prompts.texts
    assert queued == ["first"] and left == []
    assert received == [[("user", "first")]]  # what the model got as the next turn's prompt
    assert result.reply == "reply 1"


@pytest.mark.anyio
async def test_interrupt_mid_tool_cancels_and_session_stays_usable(
    make_core, fake_task_server, tmp_path
):
    turns = [
        [call("slow", {"seconds": 30}, "s1"), call("noop", {}, "s2")],
        [call("noop", {})],
        "fine",
    ]
    core = await make_core(
        OfflineBackend(turns=turns),
        agent=AgentConfig.from_dict({"mcpServers": fake_task_server()}),
        approve=allow,
        autosave=True,
    )
    loop = asyncio.get_running_loop()

    def sink(event):
        if isinstance(event, ToolCalled) and event.tool == "slow":
            loop.call_later(0.3, core.interrupt)

    start = loop.time()
    first = await core.submit("slow please", sink)
    elapsed = loop.time() - start
    events = []
    second = await core.submit("again", events.append)
    assert first.interrupted
    assert elapsed < 5
    tool_results = [m.content for m in core.session.history if m.role == "tool"]
    # noop ran beside slow and finished; slow, interrupted, is answered as cancelled
    cancelled = "error: cancelled: the user interrupted the turn before this call finished"
    assert tool_results[:2] == [cancelled, "ok"]
    assert any(m.content == "[interrupted by the user]" for m in core.session.history)
    assert [e.result for e in events if isinstance(e, ToolFinished)] == ["ok"]  # same session
    assert second.reply == "fine"
    assert_consistent(core.session.history)


@pytest.mark.anyio
async def test_interrupt_while_waiting_for_the_model(make_core, tmp_path):
    async def slow_model(messages, tools):
        await asyncio.sleep(30)
        return "never"

    core = await make_core(OfflineBackend(slow_model), autosave=True)
    events = []
    turn = asyncio.ensure_future(core.submit("hello", events.append))
    await until(lambda: core.is_running, what="the turn's start")
    await asyncio.sleep(0)  # the turn is inside its model call
    assert core.interrupt()
    result = await asyncio.wait_for(turn, 10)
    assert result.interrupted
    assert events[-1] == TurnEnded(
        TurnResult(interrupted=True, steps=1)
    )  # the renderer's one sign of it
    assert [m.role for m in core.session.history] == ["user", "assistant"]
    assert core.session.history[-1].content == "[interrupted by the user]"


@pytest.mark.anyio
async def test_interrupt_mid_stream_keeps_partial_text(make_core, tmp_path):
    text = " ".join(f"word{i}" for i in range(200))
    core = await make_core(OfflineBackend(turns=[text, "next"], chunk_delay=0.01), autosave=True)
    loop = asyncio.get_running_loop()
    seen = []

    def sink(event):
        if isinstance(event, TextDelta):
            seen.append(event.text)
            if len(seen) == 5:
                loop.call_soon(core.interrupt)

    first = await core.submit("talk", sink)
    second = await core.submit("more")
    assert first.interrupted and second.reply == "next"
    partial = core.session.history[1].content
    assert partial.startswith("word0 word1") and partial.endswith("[interrupted by the user]")
    assert len(partial) < len(text)
    assert [m.role for m in core.session.history] == ["user", "assistant", "user", "assistant"]


def write_hook(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@pytest.mark.anyio
async def test_hooks_add_context_block_and_continue(make_core, tmp_path):
    spawn = write_hook(tmp_path, "spawn.sh", "echo 'Project: apollo'\n")
    submit = write_hook(
        tmp_path,
        "submit.sh",
        'payload=$(cat)\ncase "$payload" in *forbidden*) echo "no secrets here" >&2; exit 2;; esac\n'
        "echo 'context: today is release day'\n",
    )
    stop = write_hook(
        tmp_path,
        "stop.sh",
        f'if [ ! -f {tmp_path}/stopped ]; then touch {tmp_path}/stopped; echo "run the tests too" >&2; exit 2; fi\n',
    )
    config = AgentConfig.from_dict(
        {"hooks": {"agentSpawn": [spawn], "userPromptSubmit": [submit], "stop": [stop]}}
    )
    seen_prompts = []

    def model(messages, tools):
        seen_prompts.append(messages[-1].content)
        assert "Project: apollo" in messages[0].content  # agentSpawn context in the system prompt
        return f"reply {len(seen_prompts)}"

    core = await make_core(OfflineBackend(model), agent=config, autosave=True, start=False)
    (allowed, blocked), events = await run_core(core, "hello", "this is forbidden")
    assert seen_prompts[0] == "hello\n\ncontext: today is release day"
    assert seen_prompts[1] == "run the tests too"  # the stop hook made the agent continue
    assert allowed.reply == "reply 2"
    assert blocked.blocked == "no secrets here"
    assert Notice("prompt blocked by a userPromptSubmit hook: no secrets here", "error") in events
    assert TurnEnded(TurnResult(blocked="no secrets here")) in events
    assert len(seen_prompts) == 2  # the blocked prompt never reached the model


@pytest.mark.anyio
async def test_trusted_tools_and_approval_both_ways(make_core, fake_task_server, tmp_path):
    config = AgentConfig.from_dict(
        {"mcpServers": fake_task_server(), "trustedTools": ["noop", "task_*"]}
    )
    turns = [
        [
            call("noop", {}, "trusted"),
            call("slow", {"seconds": 0}, "asked-yes"),
            call("execute_code", {"code": "echo ran"}, "asked-no"),
            call("reasoning_think", {"thought": "always allowed"}, "think"),
        ],
        "done",
    ]
    asked = []

    def approve(name, args):
        asked.append(name)
        return name == "slow"

    core = await make_core(
        OfflineBackend(turns=turns), agent=config, approve=approve, autosave=True, start=False
    )
    _, events = await run_core(core, "go")
    results = {e.id: e.result for e in events if isinstance(e, ToolFinished)}
    assert asked == ["slow", "execute_code"]
    assert results["trusted"] == "ok"
    assert results["asked-yes"] == "slept 0.0"
    assert results["asked-no"] == (
        "error: execute_code is not in trustedTools and was not approved; it did not run"
    )
    assert results["think"] == "ok"


@pytest.mark.anyio
async def test_untrusted_tool_without_approver_is_denied(make_core, tmp_path):
    marker = tmp_path / "ran"
    turns = [[call("execute_code", {"code": f"touch {marker}"})], "done"]
    core = await make_core(
        OfflineBackend(turns=turns), agent=AgentConfig(trusted_tools=()), autosave=True, start=False
    )
    _, events = await run_core(core, "go")
    assert "not in trustedTools" in next(e.result for e in events if isinstance(e, ToolFinished))
    assert not marker.exists()


@pytest.mark.anyio
async def test_execute_code_runs_in_workdir_with_timeout(make_core, tmp_path):
    turns = [
        [
            call("execute_code", {"code": "pwd; echo out; echo err >&2"}, "sh"),
            call("execute_code", {"language": "python", "code": "print(6*7)"}, "py"),
            call("execute_code", {"code": "sleep 30", "timeout": 0.5}, "slow"),
            call("execute_code", {"code": "exit 3"}, "fail"),
        ],
        "done",
    ]
    core = await make_core(OfflineBackend(turns=turns), approve=allow, autosave=True, start=False)
    _, events = await run_core(core, "go")
    results = {e.id: e for e in events if isinstance(e, ToolFinished)}
    assert results["sh"].result == f"exit code 0\n{tmp_path.resolve()}\nout\nerr"
    assert results["py"].result == "exit code 0\n42"
    assert results["slow"].result == "error: killed after 0.5 s (timeout)"
    assert results["fail"].is_error and results["fail"].result == "exit code 3"


@pytest.mark.anyio
async def test_session_save_restore_roundtrip(make_core):
    core = await make_core(queue_fallback=True, autosave=True, start=False)
    await run_core(core, LIST_PROMPT)
    path = core.session.save()
    assert path is not None
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    core.session.rename("report run")

    other = await make_core(autosave=True, start=False)
    async with other:
        other.session.restore("report run")
    assert other.session.history == core.session.history
    assert other.session.session_id == core.session.session_id
    assert [p.ids for p in other.plans] == [p.ids for p in core.plans]
    assert other.plans[0].text == core.plans[0].text  # the plan text is rebuilt on restore
    assert other.session.usage.requests == core.session.usage.requests
    listed = list_sessions()
    assert listed[0].name == "report run" and listed[0].first_prompt.startswith("Ship the report")


@pytest.mark.anyio
async def test_corrupt_session_file_gives_clear_error(make_core, tmp_path):
    core = await make_core(OfflineBackend(turns=["x"]), autosave=True, start=False)
    await run_core(core, "hi")
    path = core.session.save()
    path.write_text('{"id": "broken", "history": [')
    with pytest.raises(SessionError, match=r"corrupt session file"):
        core.session.restore(core.session.session_id)
    path.write_text('{"id": "x", "history": [{"role": "wizard"}]}')
    with pytest.raises(SessionError, match="malformed content"):
        core.session.restore(core.session.session_id)
    with pytest.raises(SessionError, match="no saved session 'nope'"):
        core.session.restore("nope")


@pytest.mark.anyio
async def test_switch_agent_rebuilds_servers_and_keeps_fallback(make_core, ollie_tasks, tmp_path):
    agents = tmp_path / ".ollie" / "agents"
    agents.mkdir(parents=True)
    (agents / "tasks.json").write_text(json.dumps({"mcpServers": ollie_tasks()[0]}))
    seen = []
    core = await make_core(
        fallback_plan_backend=lambda g, s: seen.append(g) or ["x"] * len(s), autosave=True
    )
    before = core.list_servers()
    env = await core.switch_agent("tasks", trust=True)
    during = core.list_servers()
    await core.submit(LIST_PROMPT)
    await core.switch_agent("default")
    after = core.list_servers()
    await core.submit(LIST_PROMPT)
    assert before.plan_backend == "<lambda>()"
    assert env.task_server == "tasks"
    assert during.plan_backend == "task server 'tasks'"
    tasks_entry = next(s for s in during.servers if s.name == "tasks")
    assert tasks_entry.state is ServerState.CONNECTED
    assert (
        "task_create",
        "Create an open task and return its id (the only text of the result).",
    ) in tasks_entry.tools
    assert after.plan_backend == "<lambda>()"
    assert seen == ["Ship the report"]
    assert [p.number for p in core.plans] == [1, 2]  # numbering goes on across the switch
    assert core.plans[0].backend == "task server 'tasks'"


@pytest.mark.anyio
async def test_compact_replaces_history_with_summary(make_core, tmp_path):
    core = await make_core(
        OfflineBackend(turns=["one", "two", "SUMMARY: we said one, two"]), autosave=True
    )
    await core.submit("a")
    await core.submit("b")
    done = await core.session.compact()
    assert done.summary == "SUMMARY: we said one, two"
    assert [m.role for m in core.session.history] == ["user", "assistant"]
    first = core.session.history[0].content
    assert first.startswith("Summary of the conversation so far:\nSUMMARY: we said one, two")
    assert first.endswith("verbatim:\n\na\n\n---\n\nb")  # the user's words are kept
    archived = [json.loads(line) for line in core.session.archive_path.read_text().splitlines()]
    assert [(m["role"], m["content"]) for m in archived] == [
        ("user", "a"),
        ("assistant", "one"),
        ("user", "b"),
        ("assistant", "two"),
    ]


@pytest.mark.anyio
async def test_compact_without_a_summary_keeps_the_history(make_core, tmp_path):
    core = await make_core(OfflineBackend(turns=["one", "   "]), autosave=True)
    await core.submit("a")
    done = await core.session.compact()
    assert done.history is None
    assert done.note == "the model gave no summary; the history is unchanged"
    assert [m.content for m in core.session.history] == ["a", "one"]
    assert not core.session.archive_path.exists()


@pytest.mark.anyio
async def test_submit_while_running_queues(make_core, tmp_path):
    asked: list[str] = []
    release = asyncio.Event()

    async def model(messages, tools):
        asked.append(messages[-1].content)
        await asyncio.wait_for(release.wait(), 20)  # held inside the model call
        return f"answer to {messages[-1].content}"

    core = await make_core(OfflineBackend(model), autosave=True)
    first = asyncio.create_task(core.submit("one"))
    await until(lambda: asked == ["one"], what="the first model call")
    second = await core.submit("two")  # while the model is answering "one"
    release.set()
    first = await first
    assert second.queued
    assert first.reply == "answer to two"  # the queued prompt ran right after
    assert [m.content for m in core.session.history if m.role == "user"] == ["one", "two"]


@pytest.mark.anyio
async def test_api_key_never_saved_or_emitted(make_core, tmp_path, monkeypatch):
    secret = "sk-live-THIS-IS-A-FAKE-KEY-123456"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    # execute_code no longer sees the variable; a file holding the key tests the redaction.
    (tmp_path / "key.txt").write_text(secret)
    turns = [[call("execute_code", {"code": "cat key.txt"})], f"the key is {secret}"]
    core = await make_core(OfflineBackend(turns=turns), approve=allow, autosave=True, start=False)
    _, events = await run_core(core, "print the key")
    path = core.session.save()
    assert secret not in path.read_text()
    assert all(secret not in e.result for e in events if isinstance(e, ToolFinished))
    tool_message = next(m for m in core.session.history if m.role == "tool")
    assert tool_message.content == "exit code 0\n***"  # redacted before the model saw it


@pytest.mark.anyio
async def test_system_prompt_names_workdir_platform_date_and_agent_prompt(make_core, tmp_path):
    core = await make_core(
        OfflineBackend(turns=["x"]), agent=AgentConfig(prompt="Answer in French."), autosave=True
    )
    prompt = core.system_prompt()
    assert f"Work dir: {tmp_path.resolve()}" in prompt
    assert "Platform:" in prompt and f"Python {sys.version.split()[0]}" in prompt
    assert "Date: 20" in prompt
    assert prompt.endswith("Answer in French.")
    assert Message.system(prompt).role == "system"
