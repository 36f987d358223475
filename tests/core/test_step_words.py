"""A task server that speaks its own status words (pending / in progress / closed) is read right.

A real stdio server (tests/fixtures/words_task_server.py) holds the plan; the agent
works it in parallel (`run_plan(parallel=2)`), and the run's outcome, the graph and
`%ollie plans`' table all see every step done.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import OfflineBackend
from ollie_nb.notebook.commands.plans import cmd_plans
from ollie_nb.planning import Spend, StepState, plan_view, read_state, state_label

FIXTURES = Path(__file__).parents[1] / "support" / "fixtures"
PLAN = "Tidy the shed\n- Sort tools\n- Sweep (independent)\n- Shelve tools (after 1, 2)"


def words_agent(store: Path) -> AgentConfig:
    server = {
        "command": sys.executable,
        "args": [str(FIXTURES / "words_task_server.py")],
        "env": {"STORE": str(store)},
    }
    return AgentConfig.from_dict({"mcpServers": {"tasks": server}})


def plans_table(core: AgentCore, loop: asyncio.AbstractEventLoop) -> str:
    """`%ollie plans` as its text, its core calls made on the agent's loop."""
    magics = SimpleNamespace(
        core_call=lambda fn: asyncio.run_coroutine_threadsafe(fn(core), loop).result(30)
    )
    return cmd_plans(magics, "").text()


def test_a_parallel_run_on_a_server_saying_pending_in_progress_closed(tmp_path):
    store = tmp_path / "store.json"
    core = AgentCore(OfflineBackend(), agent=words_agent(store), workdir=tmp_path, autosave=False)

    async def scenario():
        async with core:
            await core.submit(PLAN)
            record = core.plans[-1]
            before = await core.plans.statuses(record)
            run = await core.run_plan(parallel=2)
            after = await core.plans.statuses(record)
            table = await asyncio.to_thread(plans_table, core, asyncio.get_running_loop())
            return record, before, run, after, table

    record, before, run, after, table = asyncio.run(scenario())
    assert record.kind == "tasks" and len(record.ids) == 3
    assert set(before.values()) == {"pending"}  # the server's own word for open
    # every step was handed to a child, worked and reported done
    assert set(run.workers) == set(record.ids) and not run.failed
    assert run.outcome == dict.fromkeys(record.ids, StepState.DONE)
    assert run.summary == f"plan {record.number}: 3 steps done by sub-agents"
    # the server says closed; the graph draws done; %ollie plans says done
    stored = json.loads(store.read_text())["tasks"]
    assert [stored[i]["status"] for i in record.ids] == ["closed"] * 3
    assert after == dict.fromkeys(record.ids, "closed")
    view = plan_view(record.goal, record.steps, record.ids, after)
    assert view.statuses == ("done", "done", "done")
    row = table.splitlines()[-1]
    assert row.split()[0] == str(record.number) and " done " in row
    assert row.endswith(f" {Spend.total(run.spend.values())}")  # what the plan's steps used


@pytest.mark.parametrize(
    ("words", "state"),
    [
        (("open", "pending", "todo", "ready", "new", "Pending"), StepState.OPEN),
        (
            ("in_progress", "in progress", "In-Progress", "claimed", "doing", "started", "active"),
            StepState.IN_PROGRESS,
        ),
        (("done", "closed", "completed", "complete", "resolved", " FINISHED "), StepState.DONE),
        (("failed", "error", "errored"), StepState.FAILED),
        (("cancelled", "canceled", "skipped"), StepState.CANCELLED),
        (("blocked", "waiting"), StepState.BLOCKED),
        (("deferred",), StepState.DEFERRED),
    ],
)
def test_read_state_knows_the_words_task_servers_use(words, state):
    assert {read_state(word) for word in words} == {state}


def test_a_word_no_mapping_knows_is_unknown_and_shown_as_itself():
    assert read_state("triaged") is StepState.UNKNOWN
    assert state_label("triaged") == "triaged" and state_label("closed") == "done"
    assert not StepState.UNKNOWN.is_open and not StepState.UNKNOWN.is_finished
    assert StepState.CANCELLED.is_finished and StepState.FAILED.is_closed
    assert not StepState.FAILED.is_finished and StepState.OPEN.is_open
