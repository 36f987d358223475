"""What a real provider receives: agent-core scenarios through the OpenAI and Anthropic backends.

The fake provider speaks each wire format and records every request, so these tests check
the tool list with its full schemas, the system prompt, and tool results in the form each
provider expects, against schemas taken from the servers themselves.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from ollie_nb.core import AgentConfig, AgentCore, ToolCalled
from ollie_nb.llm import AnthropicBackend, OpenAIBackend, RetryPolicy
from ollie_nb.tools import PLAN_SCHEMA
from tests.llm import test_anthropic as anthropic_wire
from tests.llm import test_openai as openai_wire
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply
from tests.support.task_db import task_server as support_task_server

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)
PLAN_ARGS = {
    "goal": "Ship the report",
    "steps": [{"title": "Collect data"}, {"title": "Draw charts", "after": [0]}],
}


def allow(name: str, args: Any) -> bool:
    """The user's answer to every approval request: yes."""
    return True


@dataclass(frozen=True)
class Wire:
    """One provider's wire format, both ways: replies it streams and requests it receives."""

    name: str
    make: Callable[[FakeProvider], Any]
    call: Callable[[str, str, dict], list[bytes]]  # (call id, tool, args) -> a tool call reply
    text: Callable[[str], list[bytes]]
    tools: Callable[[dict], dict[str, dict]]  # request body -> {tool name: argument schema}
    system: Callable[[dict], str]
    tool_result: Callable[[str, str], dict]  # (call id, text) -> the message carrying it
    user: Callable[[str], dict]  # a user prompt as a message


def _openai_call(call_id: str, name: str, args: dict) -> list[bytes]:
    return [
        openai_wire.call_delta(0, "", call_id, name),
        openai_wire.call_delta(0, json.dumps(args)),
        openai_wire.chunk({}, "tool_calls"),
        openai_wire.DONE,
    ]


def _openai_text(text: str) -> list[bytes]:
    chunk = openai_wire.chunk
    return [chunk({"role": "assistant", "content": text}), chunk({}, "stop"), openai_wire.DONE]


def _openai_tools(body: dict) -> dict[str, dict]:
    assert all(t["type"] == "function" for t in body["tools"])
    return {t["function"]["name"]: t["function"]["parameters"] for t in body["tools"]}


def _openai_system(body: dict) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def _anthropic_call(call_id: str, name: str, args: dict) -> list[bytes]:
    return [
        anthropic_wire.MESSAGE_START,
        *anthropic_wire.tool_block(0, call_id, name, json.dumps(args)),
        *anthropic_wire.finish("tool_use", 5),
    ]


def _anthropic_text(text: str) -> list[bytes]:
    return [
        anthropic_wire.MESSAGE_START,
        *anthropic_wire.text_block(0, text),
        *anthropic_wire.finish("end_turn", 5),
    ]


CACHED = {"cache_control": {"type": "ephemeral"}}

WIRES = [
    Wire(
        "openai",
        lambda p: OpenAIBackend(
            "gpt-4o-mini", base_url=p.url + "/v1", api_key=FAKE_KEY, retry=FAST
        ),
        _openai_call,
        _openai_text,
        _openai_tools,
        _openai_system,
        lambda call_id, text: {"role": "tool", "tool_call_id": call_id, "content": text},
        lambda text: {"role": "user", "content": text},
    ),
    Wire(
        "anthropic",
        lambda p: AnthropicBackend(
            "claude-sonnet-4-6", api_key=FAKE_KEY, base_url=p.url, retry=FAST
        ),
        _anthropic_call,
        _anthropic_text,
        lambda body: {t["name"]: t["input_schema"] for t in body["tools"]},
        # One system block; it and the tail (the last two user messages) are cache breakpoints.
        lambda body: next(
            b["text"] for b in body["system"] if b["cache_control"] == CACHED["cache_control"]
        ),
        lambda call_id, text: {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text, **CACHED}],
        },
        lambda text: {"role": "user", "content": [{"type": "text", "text": text, **CACHED}]},
    ),
]


@pytest.fixture(params=WIRES, ids=lambda w: w.name)
def wire(request) -> Wire:
    return request.param


def task_server(db: Path) -> dict[str, Any]:
    """An mcpServers entry for the real `ollie-tasks` server of this tree over stdio on `db`."""
    return support_task_server(db, timeout=30.0)


async def served_schemas(db: Path) -> dict[str, dict]:
    """Each tool's input schema as the real task server lists it to any MCP client."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ollie_nb.tasks", "serve", "--db", str(db)]
    )
    async with Client(params, read_timeout_seconds=30) as client:
        return {t.name: t.input_schema for t in (await client.list_tools()).tools}


async def run_turns(core: AgentCore, *prompts: str) -> tuple[list, str]:
    """Submit prompts one after another; return their results and the system prompt."""
    return [await core.submit(p) for p in prompts], core.system_prompt()


def tool_text(core: AgentCore, call_id: str) -> str:
    """The text of the tool message answering `call_id` in the core's history."""
    return next(
        m.content for m in core.session.history if m.role == "tool" and m.tool_call_id == call_id
    )


@pytest.mark.anyio
async def test_plan_round_trip_persists_on_real_ollie_tasks(make_core, provider, wire, tmp_path):
    db = tmp_path / "tasks.db"
    provider.queue(
        Reply(chunks=wire.call("call_plan", "reasoning_plan", PLAN_ARGS)),
        Reply(chunks=wire.text("Planned.")),
    )
    config = AgentConfig.from_dict({"mcpServers": task_server(db)})
    core = await make_core(wire.make(provider), agent=config)
    (result,), prompt = await run_turns(core, "Plan the report")
    await core.aclose()  # the store is read as the agent left it
    assert result.reply == "Planned."
    first, second = (r.body for r in provider.requests)

    sent = wire.tools(first)
    assert sent["reasoning_plan"] == PLAN_SCHEMA
    served = await served_schemas(db)
    assert {"task_create", "task_list", "task_delete"} <= served.keys()
    for name, schema in served.items():
        assert sent[name] == schema, f"{name}: the model got another schema than the server's"
    assert sent["task_create"]["required"] == ["title"]
    assert wire.tools(second) == sent

    assert wire.system(first) == prompt == wire.system(second)
    assert "Plans are persisted as tasks on the 'tasks' MCP server: after reasoning_plan" in prompt
    assert first["messages"][-1] == wire.user("Plan the report")

    text = tool_text(core, "call_plan")
    assert text.splitlines()[-1].startswith("Plan saved on task server 'tasks'")
    assert second["messages"][-1] == wire.tool_result("call_plan", text)

    listed = subprocess.run(
        [sys.executable, "-m", "ollie_nb.tasks", "--db", str(db), "list", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    titles = {t["title"] for t in json.loads(listed.stdout)}
    assert titles == {"Ship the report", "Collect data", "Draw charts"}
    record = core.plans[-1]
    assert record.persisted and all(f"[{i}]" in text for i in record.ids)


@pytest.mark.anyio
async def test_queue_fallback_sends_each_step_as_the_next_prompt(make_core, provider, wire):
    provider.queue(
        Reply(chunks=wire.call("call_plan", "reasoning_plan", PLAN_ARGS)),
        Reply(chunks=wire.text("Queued.")),
        Reply(chunks=wire.text("Collected.")),
        Reply(chunks=wire.text("Drawn.")),
    )
    core = await make_core(wire.make(provider), queue_fallback=True)
    _, prompt = await run_turns(core, "Plan the report")
    bodies = [r.body for r in provider.requests]
    assert len(bodies) == 4
    assert wire.tools(bodies[0])["reasoning_plan"] == PLAN_SCHEMA
    text = tool_text(core, "call_plan")
    assert "Plan queued (2 steps). Stop here" in text
    assert bodies[1]["messages"][-1] == wire.tool_result("call_plan", text)
    step_prompts = [m.content for m in core.session.history if m.role == "user"][1:]
    assert step_prompts == [
        "Goal: Ship the report\n\nStep 1 of 2 [q1]: Collect data",
        "Step 2 of 2 [q2]: Draw charts\n(after: q1)",
    ]
    assert bodies[2]["messages"][-1] == wire.user(step_prompts[0])
    assert bodies[3]["messages"][-1] == wire.user(step_prompts[1])
    assert all(wire.system(body) == prompt for body in bodies)
    assert "Plans go to the prompt queue: after reasoning_plan, stop;" in prompt


@pytest.mark.anyio
async def test_denied_tool_result_is_sent_and_nothing_ran(make_core, provider, wire, tmp_path):
    marker = tmp_path / "ran"
    provider.queue(
        Reply(chunks=wire.call("call_x", "execute_code", {"code": f"touch {marker}"})),
        Reply(chunks=wire.text("Understood.")),
    )
    core = await make_core(wire.make(provider), agent=AgentConfig(trusted_tools=()))
    await run_turns(core, "run it")
    first, second = (r.body for r in provider.requests)
    schema = wire.tools(first)["execute_code"]
    assert schema["required"] == ["code"] and "code" in schema["properties"]
    denial = "error: execute_code is not in trustedTools and was not approved; it did not run"
    assert second["messages"][-1] == wire.tool_result("call_x", denial)
    assert not marker.exists()


@pytest.mark.anyio
async def test_cancelled_call_is_answered_in_the_next_request(make_core, provider, wire):
    provider.queue(
        Reply(chunks=wire.call("call_s", "execute_code", {"code": "sleep 30"})),
        Reply(chunks=wire.text("Fine.")),
    )
    core = await make_core(wire.make(provider), approve=allow)
    loop = asyncio.get_running_loop()

    def sink(event):
        if isinstance(event, ToolCalled):
            loop.call_later(0.3, core.interrupt)

    first = await core.submit("sleep please", sink)
    second = await core.submit("again")
    assert first.interrupted and second.reply == "Fine."
    assert len(provider.requests) == 2
    messages = provider.requests[1].body["messages"]
    cancelled = "error: cancelled: the user interrupted the turn before this call finished"
    assert messages[-3] == wire.tool_result("call_s", cancelled)
    assert messages[-2]["role"] == "assistant"  # "[interrupted by the user]"
    assert messages[-1] == wire.user("again")
