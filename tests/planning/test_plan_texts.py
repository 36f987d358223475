"""The texts a model reads after reasoning_plan, in every wiring case, asserted in full.

These strings steer a real model (ollie's wording was tuned on real models): the
task-server case says the tasks are committed, how to see ready steps and how to
mark one done; the queue case says to stop and not execute; no backend says to
work the steps now. Each case runs against real servers (stdio subprocesses).
"""

from __future__ import annotations

import sys

import pytest

from ollie_nb.core import AgentConfig, connect_tool_servers
from ollie_nb.core._prompt import plans_sentence
from ollie_nb.planning import QueuePlanBackend
from ollie_nb.tools import Dispatcher

PLAN = {"goal": "Ship it", "steps": [{"title": "Build"}, {"title": "Release", "after": [0]}]}
FAILING = [sys.executable, "-c", "import sys; sys.exit(3)"]


def _failing(name: str) -> dict:
    return {name: {"command": FAILING[0], "args": FAILING[1:], "connectTimeout": 10}}


async def _plan(servers: dict, fallback=None):
    config = AgentConfig.from_dict({"mcpServers": servers})
    env = await connect_tool_servers(config, Dispatcher(), ".", fallback)
    try:
        result = await env.dispatcher.dispatch("reasoning", "reasoning_plan", PLAN)
        return env, result.text, plans_sentence(env)
    finally:
        await env.aclose()


def _tasks_case(fake_task_server):
    return fake_task_server(), None


def _queue_case(_):
    return {}, QueuePlanBackend(lambda prompt: None)


def _none_case(_):
    return {}, None


def _failed_other_case(_):
    return _failing("web"), None


def _failed_tasks_case(_):
    return _failing("tasks"), None


CASES = {
    "task server": (
        _tasks_case,
        "Plan: Ship it  [{goal}]\n1. [{s1}] Build\n2. [{s2}] Release\n   after: step 1 ({s1})\n\n"
        "Plan saved on task server 'tasks': goal {goal} with 2 step tasks (parent = goal, "
        "blockers = after). Tasks committed. Use task_list to see ready steps; when you finish "
        "a step, mark it done with task_update (its id, status done) before you start the next.",
        "Plans are persisted as tasks on the 'tasks' MCP server: after reasoning_plan, use "
        "task_list to see the ready steps (each has a task id), work them, and mark each one "
        "done with task_update when you finish it.",
    ),
    "queue": (
        _queue_case,
        "Plan: Ship it\n1. [q1] Build\n2. [q2] Release\n   after: step 1 (q1)\n\n"
        "Plan queued (2 steps). Stop here — do not execute the steps now. The queue will "
        "re-enter you with each step in order, one prompt per step; work only the step each "
        "prompt gives you.",
        "Plans go to the prompt queue: after reasoning_plan, stop; each step comes back to you "
        "later as its own queued prompt, one at a time.",
    ),
    "no backend": (
        _none_case,
        "Plan: Ship it\n1. Build\n2. Release\n   after: step 1\n\n"
        "No plan backend is configured; this plan lives in context only. "
        "Work the steps yourself now, in order.",
        "Plans stay in this conversation only: work the steps yourself, in order.",
    ),
    "a failed server that is not a task server": (
        _failed_other_case,
        "Plan: Ship it\n1. Build\n2. Release\n   after: step 1\n\n"
        "No plan backend is configured; this plan lives in context only. "
        "Work the steps yourself now, in order.",
        "Plans stay in this conversation only: work the steps yourself, in order.",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.anyio
async def test_model_facing_plan_texts(case, fake_task_server):
    make, plan_text, sentence = CASES[case]
    servers, fallback = make(fake_task_server)
    env, text, said = await _plan(servers, fallback)
    record = env.reasoning.plans[-1]
    ids = dict(zip(("s1", "s2"), record.ids))
    assert text == plan_text.format(goal=record.goal_id, **ids)
    assert said == sentence


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_failed_task_server_warns_on_the_plan():
    _env, text, _ = await _plan(_failing("tasks"))
    assert text.splitlines()[-1].startswith(
        "warning: no plan backend: MCP server 'tasks' failed to connect ("
    )
    assert text.endswith("; this plan lives in context only.")


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_failed_server_without_env_names_env_as_the_fix():
    env, _, _ = await _plan(_failing("web"))
    detail = env.statuses["web"].detail
    assert detail.endswith(
        "(it has no 'env' key, so it ran in a minimal environment (PATH, HOME, USER, SHELL, "
        "TERM): if it needs variables such as API keys, add them under mcpServers.web.env)"
    )
    assert [m for m in env.messages if "web" in m] == [f"MCP server {detail}"]
