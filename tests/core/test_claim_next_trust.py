"""task_claim_next is one of the convention's task tools: the model's call runs unasked on
the wired task server as task_claim's does, and its claim's token is held by the gateway,
never shown to the model (a real ollie-tasks subprocess on a real SQLite file)."""

from __future__ import annotations

import json

import pytest

from ollie_nb.llm import Message, OfflineBackend, ToolCall
from ollie_nb.tasks import open_store
from tests.support.agents import tasks_agent

pytestmark = pytest.mark.slow


def next_claiming_model(goal: str, task_id: str):
    """A model that claims the next step of `goal`, marks `task_id` done, then answers."""

    async def reply(messages, tools):
        done = sum(1 for m in messages if m.role == "tool")
        if done == 0:
            args = {"assignee": "me", "parents": [goal], "lease": 60}
            return Message.assistant("", [ToolCall("c1", "task_claim_next", json.dumps(args))])
        if done == 1:
            args = {"id": task_id, "status": "done"}
            return Message.assistant("", [ToolCall("c2", "task_update", json.dumps(args))])
        return Message.assistant("claimed and done")

    return reply


@pytest.mark.anyio
async def test_the_models_claim_next_runs_unasked_and_its_token_stays_hidden(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        goal = store.create("Chores")
        task = store.create("Sweep", parent=goal)
    core = await make_core(OfflineBackend(next_claiming_model(goal, task)), agent=tasks_agent(db))
    await core.submit("claim the next chore and finish it")
    history = list(core.session.history)
    await core.aclose()  # the store is read as the agent left it
    answers = [str(m.content) for m in history if m.role == "tool"]
    assert answers[0].startswith("claimed: ") and f"id: {task}" in answers[0], answers
    assert not any("token" in str(m.content) for m in history), answers  # never shown
    assert answers[1].startswith("ok: "), answers  # the gateway presented the token
    with open_store(db, create=False) as store:
        assert store.get(task).status == "done"
