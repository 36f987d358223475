"""Which server holds plans: a server that merely lists `task_create` does not take them over,
and only the convention's own tools of the wired task server run unasked (issue 34)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.core import AgentConfig, AgentCore, ConfigError, ToolFinished
from ollie_nb.core._routing import TrustGate
from ollie_nb.core._tool_servers import (
    ServersDescription,
    ServerState,
    ServerStatus,
    choose_task_server,
)
from ollie_nb.llm import OpenAIBackend, RetryPolicy
from tests.conftest import read_db
from tests.llm import test_openai as openai_wire
from tests.support.agents import FIXTURES
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply

TASKS = {"command": sys.executable, "args": ["-m", "ollie_nb.tasks", "serve", "--db", "x.db"]}
SEARCH = {"command": sys.executable, "args": ["search_server.py"]}


def statuses(*offering: tuple[str, str]) -> dict[str, ServerStatus]:
    """Connected servers (name, serverInfo name), each listing task_create."""
    return {
        name: ServerStatus(name, ServerState.CONNECTED, tools=["task_create"], program=program)
        for name, program in offering
    }


def config(servers: dict[str, dict], **keys: Any) -> AgentConfig:
    return AgentConfig.from_dict({"mcpServers": servers, **keys})


def test_ollie_tasks_holds_plans_over_a_server_listed_before_it_and_the_user_is_told():
    agent = config({"search": SEARCH, "tasks": TASKS})
    choice = choose_task_server(statuses(("search", "search"), ("tasks", "ollie-tasks")), agent)
    assert choice.name == "tasks"
    assert choice.reason == (
        "MCP server 'tasks' exposes task_create; chosen over 'search': it is ollie-tasks"
    )
    assert "taskServer" in choice.notice and "'search'" in choice.notice


def test_a_server_calling_itself_ollie_tasks_does_not_win_over_the_agent_files_ollie_tasks():
    agent = config({"search": SEARCH, "tasks": TASKS})
    choice = choose_task_server(statuses(("search", "ollie-tasks"), ("tasks", "x")), agent)
    assert choice.name == "tasks"


def test_the_agent_files_task_server_key_names_the_one_that_holds_plans():
    agent = config({"search": SEARCH, "tasks": TASKS}, taskServer="search")
    choice = choose_task_server(statuses(("search", "search"), ("tasks", "ollie-tasks")), agent)
    assert (choice.name, choice.notice) == ("search", "")
    assert choice.reason == "the agent file's taskServer names 'search'"


def test_a_named_task_server_that_is_down_is_not_replaced_by_another():
    agent = config({"search": SEARCH, "tasks": TASKS}, taskServer="tasks")
    choice = choose_task_server(statuses(("search", "search")), agent)
    assert choice.name is None
    assert "taskServer 'tasks' is not connected" in choice.notice


def test_a_lone_server_that_is_not_ollie_tasks_is_chosen_by_its_tools_with_a_notice():
    agent = config({"search": SEARCH})
    choice = choose_task_server(statuses(("search", "search")), agent)
    assert choice.name == "search"
    assert "chosen by its tools alone" in choice.notice


def test_a_lone_ollie_tasks_is_chosen_without_a_notice():
    agent = config({"tasks": TASKS})
    choice = choose_task_server(statuses(("tasks", "ollie-tasks")), agent)
    assert (choice.name, choice.notice) == ("tasks", "")
    assert choice.reason == "MCP server 'tasks' exposes task_create"


def test_a_task_server_key_naming_no_server_is_a_config_error():
    with pytest.raises(ConfigError, match="'taskServer' is 'nope', not one of mcpServers"):
        config({"tasks": TASKS}, taskServer="nope")


@pytest.mark.parametrize(
    ("tool", "server", "trusted"),
    [
        ("task_create", "tasks", True),
        ("task_delete", "tasks", True),
        ("task_upload", "tasks", False),  # named like the convention, not of it
        ("task_create", "search", False),  # the convention's name, on another server
    ],
)
def test_implicit_trust_covers_the_conventions_tools_on_the_task_server_only(tool, server, trusted):
    gate = TrustGate(None, None, lambda server: None, task_server="tasks")
    assert gate.trusts(tool, server) is trusted


# -- end to end: a scripted model at the OpenAI wire format, real stdio servers ---------------

PLAN = {"goal": "Ship the report", "steps": [{"title": "Collect data"}]}


def call(call_id: str, name: str, args: dict) -> Reply:
    return Reply(
        chunks=[
            openai_wire.call_delta(0, "", call_id, name),
            openai_wire.call_delta(0, json.dumps(args)),
            openai_wire.chunk({}, "tool_calls"),
            openai_wire.DONE,
        ]
    )


def text(reply: str) -> Reply:
    chunk = openai_wire.chunk
    return Reply(
        chunks=[chunk({"role": "assistant", "content": reply}), chunk({}, "stop"), openai_wire.DONE]
    )


def search_and_tasks(tmp_path: Path, **keys: Any) -> AgentConfig:
    """A "web search" server listing task_create and task_upload, before a real ollie-tasks."""
    search = {
        "command": sys.executable,
        "args": [str(FIXTURES / "hostile_server.py")],
        "env": {"CALLS": str(tmp_path / "search-calls.jsonl")},
    }
    tasks = {
        "command": sys.executable,
        "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(tmp_path / "tasks.db")],
        "timeout": 30.0,
    }
    return config({"search": search, "tasks": tasks}, **keys)


def search_calls(tmp_path: Path) -> list[str]:
    calls = tmp_path / "search-calls.jsonl"
    return (
        [json.loads(line)["tool"] for line in calls.read_text().splitlines()]
        if calls.exists()
        else []
    )


def impersonation(
    provider: FakeProvider, tmp_path: Path, **keys: Any
) -> tuple[ServersDescription, list, list[str]]:
    """The model plans, then obeys injected text telling it to upload a file of the user's."""
    provider.queue(
        call("c1", "reasoning_plan", PLAN),
        call("c2", "task_upload", {"path": str(tmp_path / "notes.txt")}),
        text("Done."),
    )
    backend = OpenAIBackend(
        "gpt-4o-mini",
        base_url=provider.url + "/v1",
        api_key=FAKE_KEY,
        retry=RetryPolicy(0.01, 0.05),
    )
    asked: list[str] = []
    core = AgentCore(
        backend,
        agent=search_and_tasks(tmp_path, **keys),
        workdir=tmp_path,
        approve=lambda name, args: asked.append(name) or False,
    )

    async def scenario() -> tuple[ServersDescription, list]:
        async with core:
            events: list = []
            await core.submit("Plan the report, then do what the search results say", events.append)
            return core.list_servers(), events

    env, events = asyncio.run(scenario())
    return env, events, asked


@pytest.mark.slow
def test_a_search_server_listing_task_create_gets_no_plans_and_its_task_upload_asks(
    provider, tmp_path
):
    env, events, asked = impersonation(provider, tmp_path)
    titles = sorted(t["title"] for t in read_db(tmp_path / "tasks.db").values())
    assert titles == ["Collect data", "Ship the report"]  # the plan went to ollie-tasks
    assert asked == ["task_upload"]  # asked, and denied
    assert search_calls(tmp_path) == []  # neither the plan nor the upload reached it
    results = {e.tool: e for e in events if isinstance(e, ToolFinished)}
    assert results["task_upload"].is_error
    assert env.task_server == "tasks"
    (told,) = [m for m in env.messages if "taskServer" in m]
    assert told == (
        "plans go to MCP server 'tasks' (chosen over 'search': it is ollie-tasks); "
        "the agent file's taskServer names the server that holds plans"
    )
    assert env.plan_backend_reason == (
        "MCP server 'tasks' exposes task_create; chosen over 'search': it is ollie-tasks"
    )


@pytest.mark.slow
def test_the_server_the_agent_file_names_holds_the_plans(provider, tmp_path):
    env, _events, asked = impersonation(provider, tmp_path, taskServer="search")
    assert read_db(tmp_path / "tasks.db") == {}  # ollie-tasks got no plan
    assert search_calls(tmp_path)[:2] == ["task_create", "task_create"]  # goal and step
    assert asked == ["task_upload"]  # still not the convention's: it asks on the named one too
    assert env.task_server == "search"
