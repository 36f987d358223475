"""Traces of turns, model requests, tool calls, plans and plan steps (OpenTelemetry, GenAI conventions).

Spans are read from the SDK's in-memory exporter; the task server is the real `ollie-tasks`
over stdio on a real SQLite file, so a span's task ids are checked against the rows.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest

from ollie_nb.core import (
    AgentConfig,
    AgentCore,
    TracingUnavailableError,
    disable_tracing,
    enable_tracing,
    tracing,
)
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
from ollie_nb.planning import read_step
from tests.conftest import read_db
from tests.core.test_parallel_plans import slow_steps
from tests.support.absent import skip_or_fail
from tests.support.agents import ROOT, tasks_agent

try:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode
except ImportError:  # pragma: no cover - the otel extra is in the dev install
    skip_or_fail(
        "the otel extra is not installed (pip install -e '.[otel]')", allow_module_level=True
    )

PLAN = "Ship it\n- Prepare\n- Check (after 1)"
SECRET = "sk-test-0123456789abcdef"


@pytest.fixture
def spans():
    """Tracing on, into memory, for the test; off again after it."""
    exporter = InMemorySpanExporter()
    enable_tracing(exporter)
    try:
        yield exporter
    finally:
        disable_tracing()


def tasks_agent_with_secret(db) -> AgentConfig:
    """ollie-tasks on `db`, its server env holding a secret the redactor knows."""
    args = ["-m", "ollie_nb.tasks", "serve", "--db", str(db)]
    server = {"command": sys.executable, "args": args, "env": {"API_TOKEN": SECRET}}
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}})


def by_name(finished, prefix: str) -> list:
    return [s for s in finished if s.name.startswith(prefix)]


def children(finished, parent) -> list:
    return [
        s for s in finished if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]


def test_a_turn_holds_its_model_requests_and_tool_calls_and_the_plan_span_names_the_tasks(
    tmp_path, spans
):
    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(), agent=tasks_agent_with_secret(db), workdir=tmp_path)

    async def scenario():
        async with core:
            await core.submit(PLAN)
            return core.plans[-1]

    record = asyncio.run(scenario())
    finished = spans.get_finished_spans()
    [turn] = by_name(finished, "invoke_agent")
    assert turn.parent is None and turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.conversation.id"] == core.session.session_id
    chats = [s for s in children(finished, turn) if s.name.startswith("chat")]
    [tool] = [s for s in children(finished, turn) if s.name.startswith("execute_tool")]
    assert [c.name for c in chats] == ["chat offline-planner"] * 2
    first, second = sorted(chats, key=lambda s: s.start_time)
    assert first.attributes["gen_ai.provider.name"] == "offline"
    assert first.attributes["gen_ai.system"] == "offline"
    assert first.attributes["gen_ai.request.model"] == "offline-planner"
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert first.start_time < tool.start_time < tool.end_time < second.start_time
    # the tokens the spans carry are the ones the session counted
    assert (
        sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats)
        == core.session.usage.input_tokens
    )
    assert (
        sum(c.attributes["gen_ai.usage.output_tokens"] for c in chats)
        == core.session.usage.output_tokens
    )
    assert first.attributes["gen_ai.usage.cache_read.input_tokens"] == 0
    # the reasoning_plan call's span: its goal id and step count, the task rows it made
    assert tool.name == "execute_tool reasoning_plan"
    assert tool.attributes["gen_ai.tool.name"] == "reasoning_plan"
    assert tool.attributes["ollie.tool.server"] == "reasoning"
    assert tool.attributes["ollie.plan.steps"] == 2
    assert tool.attributes["ollie.goal.id"] == record.goal_id
    assert tool.attributes["ollie.plan.number"] == record.number
    rows = read_db(db)
    assert list(tool.attributes["ollie.task.ids"]) == list(record.ids)
    assert all(rows[i]["parent"] == record.goal_id for i in record.ids)
    assert tool.status.status_code is StatusCode.UNSET
    # no message content by default: neither the prompt nor the goal is in any span
    for span in finished:
        for key, value in span.attributes.items():
            assert "Ship it" not in str(value) and "Prepare" not in str(value), key
        assert "gen_ai.input.messages" not in span.attributes


def test_a_parallel_run_nests_each_step_and_its_sub_agent_turn_under_the_run(tmp_path, spans):
    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(slow_steps(0.05)), agent=tasks_agent_with_secret(db))

    async def scenario():
        async with core:
            await core.submit(PLAN)
            spans.clear()
            run = await core.runs.run_plan(parallel=2)
            return core.plans[-1], run

    record, run = asyncio.run(scenario())
    assert set(run.outcome.values()) == {"done"}
    finished = spans.get_finished_spans()
    [plan_run] = by_name(finished, "run_plan")
    assert plan_run.attributes["ollie.goal.id"] == record.goal_id
    steps = sorted(children(finished, plan_run), key=lambda s: s.attributes["ollie.step.number"])
    assert [s.name for s in steps] == [f"work_step {i}" for i in record.ids]
    rows = read_db(db)
    for number, (step, task_id) in enumerate(zip(steps, record.ids), 1):
        assert step.attributes["ollie.task.id"] == task_id
        assert step.attributes["ollie.goal.id"] == record.goal_id == rows[task_id]["parent"]
        assert step.attributes["ollie.step.number"] == number
        assert step.attributes["ollie.step.status"] == "done" == rows[task_id]["status"]
        assert step.status.status_code is StatusCode.UNSET
        [turn] = children(finished, step)  # the worker's turn, under its step
        assert turn.name.startswith("invoke_agent")
        assert turn.attributes["gen_ai.conversation.id"].startswith(
            core.session.session_id + "/worker"
        )
        kinds = sorted(s.attributes["gen_ai.operation.name"] for s in children(finished, turn))
        assert kinds == ["chat", "chat", "execute_tool"]  # task_update, then the reply
        [update] = by_name(children(finished, turn), "execute_tool")
        assert update.attributes["gen_ai.tool.name"] == "task_update"
        assert update.attributes["ollie.tool.server"] == "tasks"
    assert {s.context.trace_id for s in finished} == {plan_run.context.trace_id}


def test_a_step_that_failed_is_an_error_span_and_the_others_are_not(tmp_path, spans):
    db = tmp_path / "tasks.db"
    backend = OfflineBackend(slow_steps(0.05, fail="Check"))
    core = AgentCore(backend, agent=tasks_agent_with_secret(db), workdir=tmp_path)

    async def scenario():
        async with core:
            await core.submit("Ship it\n- Prepare\n- Check (independent)")
            return await core.runs.run_plan(parallel=2)

    run = asyncio.run(scenario())
    assert sorted(run.outcome.values()) == ["done", "failed"]
    steps = by_name(spans.get_finished_spans(), "work_step")
    by_status = {s.attributes["ollie.step.status"]: s for s in steps}
    assert by_status["failed"].status.status_code is StatusCode.ERROR
    assert "the model broke down" in by_status["failed"].status.description
    assert by_status["done"].status.status_code is StatusCode.UNSET
    [plan_run] = by_name(spans.get_finished_spans(), "run_plan")
    assert plan_run.status.status_code is StatusCode.ERROR


@pytest.mark.slow
def test_a_step_the_sub_agent_left_unmarked_is_an_error_span(tmp_path, spans):
    db = tmp_path / "tasks.db"

    def reply(messages, tools):
        last = messages[-1]
        step = read_step(last.content) if last.role == "user" else None
        if step is not None and step.title == "Check" and is_step_prompt(last.content):
            return "I looked at it."  # ends without marking the step done
        return demo_reply(messages, tools)

    core = AgentCore(OfflineBackend(reply), agent=tasks_agent_with_secret(db), workdir=tmp_path)

    async def scenario():
        async with core:
            await core.submit("Ship it\n- Prepare\n- Check (independent)")
            return await core.runs.run_plan(parallel=2)

    run = asyncio.run(scenario())
    assert sorted(run.outcome.values()) == ["done", "failed"]
    steps = by_name(spans.get_finished_spans(), "work_step")
    failed = next(s for s in steps if s.attributes["ollie.step.status"] == "failed")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "the step failed"
    assert failed.attributes["error.type"] == "step_not_done"


def test_a_failed_tool_call_is_an_error_span(tmp_path, spans):
    db = tmp_path / "tasks.db"
    call = {"name": "task_update", "arguments": {"id": "t-none", "status": "done"}}
    core = AgentCore(OfflineBackend(turns=[[call], "ok"]), agent=tasks_agent_with_secret(db))

    async def scenario():
        async with core:
            await core.submit("mark a task that is not there")

    asyncio.run(scenario())
    [tool] = by_name(spans.get_finished_spans(), "execute_tool")
    assert tool.attributes["gen_ai.tool.name"] == "task_update"
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.attributes["error.type"] == "tool_error"
    assert tool.status.description is None  # the result's text is content: not recorded


def test_the_watch_works_each_step_in_a_trace_of_its_own_linked_to_the_plan(tmp_path, spans):
    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(), agent=tasks_agent_with_secret(db), workdir=tmp_path)

    async def scenario():
        # a span of the caller's around it all: the watch's turns still start traces of their own
        with tracing().tracer.start_as_current_span("notebook cell"):
            async with core:
                await core.submit(PLAN)
                await core.watch.start()  # the ready steps are queued and worked by the agent
                await core.watch.until_idle(60)
                await core.watch.stop()
                return core.plans[-1]

    record = asyncio.run(scenario())
    finished = spans.get_finished_spans()
    [cell] = by_name(finished, "notebook cell")
    [made] = by_name(finished, "execute_tool reasoning_plan")
    assert made.context.trace_id == cell.context.trace_id
    steps = sorted(by_name(finished, "work_step"), key=lambda s: s.attributes["ollie.step.number"])
    assert [s.attributes["ollie.task.id"] for s in steps] == list(record.ids)
    traces = {made.context.trace_id}
    for step in steps:
        assert step.parent is None  # a root: a trace of its own
        traces.add(step.context.trace_id)
        [link] = step.links
        assert link.context.span_id == made.context.span_id
        assert link.context.trace_id == made.context.trace_id
        assert step.attributes["ollie.goal.id"] == record.goal_id
        assert step.attributes["ollie.worker"] == core.agent_name
        [turn] = children(finished, step)
        assert turn.name.startswith("invoke_agent") and turn.attributes["ollie.task.id"]
    assert len(traces) == 1 + len(record.ids)
    assert {r["status"] for i, r in read_db(db).items() if i in record.ids} == {"done"}


def test_message_contents_are_recorded_only_when_asked_and_then_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exporter = InMemorySpanExporter()
    enable_tracing(exporter)  # the conventions' switch, read from the environment
    db = tmp_path / "tasks.db"
    call = {"name": "task_update", "arguments": {"id": "t-none", "note": f"token {SECRET}"}}
    backend = OfflineBackend(turns=[[call], f"the key is {SECRET}"])
    agent = tasks_agent_with_secret(db)
    core = AgentCore(backend, agent=agent, workdir=tmp_path, approve=lambda name, args: True)

    async def scenario():
        async with core:
            await core.submit(f"use the key {SECRET} please")

    try:
        assert tracing().capture
        asyncio.run(scenario())
    finally:
        disable_tracing()
    finished = exporter.get_finished_spans()
    everything = json.dumps([dict(s.attributes) for s in finished])
    assert SECRET not in everything
    [turn] = by_name(finished, "invoke_agent")
    prompt = json.loads(turn.attributes["gen_ai.input.messages"])
    assert prompt == [
        {"role": "user", "parts": [{"type": "text", "content": "use the key *** please"}]}
    ]
    first, _ = sorted(by_name(finished, "chat"), key=lambda s: s.start_time)
    sent = json.loads(first.attributes["gen_ai.input.messages"])
    assert sent[-1]["parts"][0]["content"] == "use the key *** please"
    assert "gen_ai.system_instructions" in first.attributes
    reply = json.loads(first.attributes["gen_ai.output.messages"])
    assert reply[0]["parts"][0]["type"] == "tool_call"
    assert "***" in reply[0]["parts"][0]["arguments"]
    [tool] = by_name(finished, "execute_tool")
    assert "***" in tool.attributes["gen_ai.tool.call.arguments"]
    assert "gen_ai.tool.call.result" in tool.attributes


@pytest.mark.slow
def test_a_key_the_model_wrote_into_tool_arguments_is_redacted_in_the_trace(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exporter = InMemorySpanExporter()
    enable_tracing(exporter)
    written = "ghp_Xq7Lm2Pz9Rt4Vw8Yb3Nc6Hd1Jf5Kg0Sa2Ue"  # in no environment: only detection sees it
    call = {"name": "task_update", "arguments": {"id": "t-none", "note": f"use {written}"}}
    backend = OfflineBackend(turns=[[call], f"I used {written}"])
    core = AgentCore(
        backend,
        agent=tasks_agent(tmp_path / "tasks.db"),
        workdir=tmp_path,
        approve=lambda n, a: True,
    )

    async def scenario():
        async with core:
            await core.submit("note the token")

    try:
        asyncio.run(scenario())
    finally:
        disable_tracing()
    finished = exporter.get_finished_spans()
    assert written not in json.dumps([dict(s.attributes) for s in finished])
    [tool] = by_name(finished, "execute_tool")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"])["note"] == "use ***"
    first, last = sorted(by_name(finished, "chat"), key=lambda s: s.start_time)
    [part] = json.loads(first.attributes["gen_ai.output.messages"])[0]["parts"]
    assert json.loads(part["arguments"])["note"] == "use ***"
    assert "I used ***" in last.attributes["gen_ai.output.messages"]


def test_tracing_asked_for_without_the_extra_is_one_usage_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if not installed
    with pytest.raises(TracingUnavailableError) as raised:
        enable_tracing()
    assert str(raised.value) == "tracing needs OpenTelemetry: pip install 'ollie-nb[otel]'"
    assert not tracing().enabled


OFF_SCRIPT = """
import asyncio, sys
from ollie_nb.core import AgentCore, tracing
from ollie_nb.llm import OfflineBackend

async def main():
    async with AgentCore(OfflineBackend(turns=["hi"]), autosave=False, execute=False) as core:
        await core.submit("hello")
asyncio.run(main())
print(tracing().enabled, any(m.startswith("opentelemetry") for m in sys.modules))
"""


def run_script(env_extra: dict[str, str], prelude: str = "") -> str:
    return run_script_done(env_extra, prelude).stdout.strip()


def run_script_done(env_extra: dict[str, str], prelude: str = "") -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(env_extra, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(OFF_SCRIPT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_off_by_default_a_turn_never_imports_opentelemetry(tmp_path):
    assert run_script({"OLLIE_DATA_DIR": str(tmp_path)}) == "False False"


def test_an_otlp_endpoint_in_the_environment_turns_tracing_on(tmp_path):
    # nothing listens there: the batch exporter's failure is logged, never the turn's
    env = {"OLLIE_DATA_DIR": str(tmp_path), "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    env["OTEL_BSP_EXPORT_TIMEOUT"] = "500"
    assert run_script(env) == "True True"
    env["OTEL_SDK_DISABLED"] = "true"
    assert run_script(env) == "False False"


def test_a_sub_agent_the_model_spawns_turns_under_the_spawning_call(tmp_path, spans):
    def reply(messages, tools):
        if "You are sub-agent" in messages[0].content:
            return "the child's work is done"
        answered = [m for m in messages if m.role == "tool"]
        if not answered:
            return [{"name": "subagent_spawn", "arguments": {"name": "helper", "prompt": "go"}}]
        if len(answered) == 1:
            return [{"name": "subagent_wait", "arguments": {"names": ["helper"], "timeout": 30}}]
        return "all done"

    core = AgentCore(OfflineBackend(reply), workdir=tmp_path, approve=lambda name, args: True)

    async def scenario():
        async with core:
            return await core.submit("fan out")

    assert asyncio.run(scenario()).reply == "all done"
    finished = spans.get_finished_spans()
    [spawn] = by_name(finished, "execute_tool subagent_spawn")
    [parent, child] = sorted(by_name(finished, "invoke_agent"), key=lambda s: s.start_time)
    assert spawn.parent.span_id == parent.context.span_id
    assert child.parent.span_id == spawn.context.span_id
    assert child.attributes["gen_ai.conversation.id"] == core.session.session_id + "/helper"
    assert [s.name for s in children(finished, child)] == ["chat offline-planner"]


def test_an_endpoint_in_the_environment_without_the_extra_is_one_line_and_the_turn_runs(
    tmp_path,
):
    env = {"OLLIE_DATA_DIR": str(tmp_path), "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    blocked = "import sys; sys.modules['opentelemetry.sdk.trace'] = None\n"  # as if not installed
    done = run_script_done(env, blocked)
    assert done.stdout.split()[0] == "False"  # tracing off, and the turn ran
    assert done.stderr.splitlines() == [
        "ollie_nb: OTEL_EXPORTER_OTLP_ENDPOINT is set but tracing needs OpenTelemetry: "
        "pip install 'ollie-nb[otel]'"
    ]


def test_a_queue_plan_step_the_agent_works_is_a_step_span_and_a_failed_one_is_an_error(
    tmp_path, spans
):
    backend = OfflineBackend(slow_steps(0, fail="Check"))
    core = AgentCore(backend, workdir=tmp_path, queue_fallback=True, autosave=False)

    async def scenario():
        async with core:
            await core.submit("Ship it\n- Prepare\n- Check (independent)")  # the queue drains
            return core.plans[-1]

    record = asyncio.run(scenario())
    assert record.kind == "queue"
    steps = by_name(spans.get_finished_spans(), "work_step")
    by_number = {s.attributes["ollie.step.number"]: s for s in steps}
    assert sorted(by_number) == [1, 2]
    assert [by_number[n].attributes["ollie.step.id"] for n in (1, 2)] == list(record.ids)
    assert all("ollie.task.id" not in s.attributes for s in steps)  # no task store here
    assert by_number[1].status.status_code is StatusCode.UNSET
    assert by_number[2].status.status_code is StatusCode.ERROR
    assert "the model broke down" in by_number[2].status.description
    [turn] = children(spans.get_finished_spans(), by_number[2])
    assert turn.attributes["ollie.step.id"] == record.ids[1]


def test_tracing_turned_on_again_records_with_the_same_exporter_or_a_new_one(tmp_path):
    """Issue 38: after disable_tracing(), the same exporter recorded nothing, silently."""

    def one_turn() -> None:
        async def scenario():
            core = AgentCore(OfflineBackend(turns=["hi"]), workdir=tmp_path, autosave=False)
            async with core:
                await core.submit("hello")

        asyncio.run(scenario())

    same, new = InMemorySpanExporter(), InMemorySpanExporter()
    for exporter, recorded in ((same, 1), (same, 2), (new, 1)):
        enable_tracing(exporter)
        try:
            one_turn()
        finally:
            disable_tracing()
        assert len(by_name(exporter.get_finished_spans(), "invoke_agent")) == recorded


IMPORT_SWITCHES_NOTHING = """
import os
import ollie_nb.core
from ollie_nb.core import _secrets, tracing
os.environ["OLLIE_IMPORT_CHECK"] = "1"
print(tracing().enabled, _secrets._changes.count)
_secrets.Redactor()
os.environ["OLLIE_IMPORT_CHECK"] = "2"
print(_secrets._changes.count)
"""


@pytest.mark.slow
def test_importing_the_core_switches_nothing_on_and_hooks_nothing():
    """No audit hook at import (the first Redactor starts the environment watch) and
    tracing stays off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_SWITCHES_NOTHING],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    imported, started = done.stdout.split("\n")[:2]
    assert imported == "False 0"
    assert started == "1"
