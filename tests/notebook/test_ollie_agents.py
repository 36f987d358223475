"""ollie's own agent files in a real kernel: found in ~/.config/ollie/agents, hooks run.

HOME is a temporary dir (never the real one); the agent files use ollie's forms:
hooks as strings or arrays, "" for no hook, preTurn/postTurn, ${VAR} in a
server's env, and keys ollie_nb does not know.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.agents import FIXTURES, kernel_env
from tests.support.kernel_harness import Kernel

HOOK = """#!/bin/sh
event="$1"
payload=$(cat)
printf '%s %s\\n' "$event" "$payload" >> "$(dirname "$0")/hooks.log"
echo "context-from-$event"
"""


def _write_agents(base: Path) -> None:
    hook = base / "hook.sh"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    ollie_dir = base / "home" / ".config" / "ollie" / "agents"
    ours = base / "config" / "agents"
    for folder in (ollie_dir, ours):
        folder.mkdir(parents=True)
    server = {
        "command": sys.executable,
        "args": [str(FIXTURES / "fake_task_server.py")],
        "env": {"STORE": "${PARITY_STORE}", "FAULT": "none"},
    }
    agent = {
        "name": "ollie-style",
        "description": "written for ollie",
        "prompt": "Be brief.",
        "mcpServers": {"tasks": server},
        "hooks": {
            "agentSpawn": f"{hook} agentSpawn",
            "userPromptSubmit": "",
            "preTurn": [f"{hook} preTurn", ""],
            "postTurn": f"{hook} postTurn",
            "stop": "",
        },
        "toolsSettings": {"execute_code": {"allow": True}},
    }
    (ollie_dir / "ollie-style.json").write_text(json.dumps(agent, indent=2))
    (ollie_dir / "shadow.json").write_text(json.dumps({"prompt": "shadow from ollie"}))
    (ours / "shadow.json").write_text(json.dumps({"prompt": "shadow from ollie_nb"}))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("ollie-agents")
    _write_agents(base)
    env = kernel_env(base)
    env.update(HOME=str(base / "home"), XDG_CONFIG_HOME="", PARITY_STORE=str(base / "store.json"))
    k = Kernel(str(base), env)
    k.base = base
    assert k.run("%load_ext ollie_nb").error is None
    yield k
    k.shutdown()


def _log(kernel) -> list[tuple[str, dict]]:
    lines = (kernel.base / "hooks.log").read_text().splitlines()
    return [(line.split(" ", 1)[0], json.loads(line.split(" ", 1)[1])) for line in lines]


def test_an_ollie_agent_is_found_by_name_and_its_hooks_run(kernel):
    switched = kernel.run("%ollie agent ollie-style")
    assert switched.error is None and "Traceback" not in switched.stderr()
    assert "unknown key 'toolsSettings' ignored" in switched.text()
    system = kernel.run("%ollie system").text()
    assert "Be brief." in system and "context-from-agentSpawn" in system
    assert "Plans are persisted as tasks on the 'tasks' MCP server" in system
    assert [event for event, _ in _log(kernel)] == ["agentSpawn"]

    first = kernel.run("%%ollie\nhello there")
    assert first.error is None
    assert [event for event, _ in _log(kernel)] == ["agentSpawn", "preTurn", "postTurn"]
    pre = _log(kernel)[1][1]
    assert pre["hook_event_name"] == "preTurn" and pre["prompt"] == "hello there\n"
    second = kernel.run("%%ollie\nand again")
    assert second.error is None
    users = kernel.run(
        "import json, ollie_nb\n"
        "print(json.dumps([m.content for m in ollie_nb.agent().history if m.role == 'user']))"
    )
    first_user, second_user = json.loads(users.text())
    assert first_user == "hello there\n\n\ncontext-from-preTurn"
    assert second_user == "and again\n\n\ncontext-from-postTurn\ncontext-from-preTurn"


def test_the_servers_env_expands_vars_so_plans_reach_the_task_server(kernel):
    kernel.run("%ollie agent ollie-style")
    run = kernel.run("%%ollie\nShip it\n- Build\n- Release")
    assert run.error is None
    stored = json.loads((kernel.base / "store.json").read_text())["tasks"]
    assert sorted(t["title"] for t in stored.values()) == ["Build", "Release", "Ship it"]


def test_our_config_dir_wins_over_ollies_on_a_name_clash(kernel):
    assert kernel.run("%ollie agent shadow").error is None
    assert "shadow from ollie_nb" in kernel.run("%ollie system").text()
    names = kernel.run("%ollie agents").text()
    assert "ollie-style" in names and "shadow" in names


def test_tools_cost_queue_pop_and_debug_commands(kernel):
    kernel.run("%ollie agent ollie-style")
    tools = kernel.run("%ollie tools").text()
    for name, server in [("reasoning_plan", "reasoning"), ("task_create", "tasks")]:
        assert any(name in line and server in line for line in tools.splitlines()), tools
    assert "execute_code" in tools
    cost = kernel.run("%ollie cost").text()
    assert "$0.0000 this session: " in cost and "is a local model (offline)" in cost
    assert "the queue is empty" in kernel.run("%ollie queue pop").text()
    kernel.run("import ollie_nb\nollie_nb.agent().core.prompts.put('later')")
    popped = kernel.run("%ollie queue pop").text()
    assert "later" in popped and "taken off the queue" in popped
    assert "no internal error" in kernel.run("%ollie debug").text()


def test_an_error_in_the_users_function_names_it_and_points_to_debug(kernel):
    """The offline model's function is the user's code: its KeyError is theirs, not a bug."""
    setup = (
        "import ollie_nb\nfrom ollie_nb.llm import OfflineBackend\n"
        "def broken(messages, tools):\n    return {}['missing']\n"
        "ollie_nb.use_backend(OfflineBackend(broken))"
    )
    assert kernel.run(setup).error is None
    run = kernel.run("%%ollie\nhello")
    assert run.error is None
    assert "your code raised KeyError: 'missing' (in broken();" in run.text()
    assert "%ollie debug shows the traceback" in run.text()
    debug = kernel.run("%ollie debug").text()
    assert debug.startswith("the last error, raised by your code:")
    assert "Traceback (most recent call last)" in debug and "KeyError: 'missing'" in debug
    assert "in broken" in debug
