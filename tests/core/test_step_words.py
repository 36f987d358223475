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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import OfflineBackend
from ollie_nb.notebook.commands.plans import cmd_plans
from ollie_nb.planning import Spend, StepState, plan_view, read_state, state_label
from ollie_nb.planning._state import _WORDS

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
            run = await core.runs.run_plan(parallel=2)
            after = await core.plans.statuses(record)
            table = await asyncio.to_thread(plans_table, core, asyncio.get_running_loop())
            return record, before, run, after, table

    record, before, run, after, table = asyncio.run(scenario())
    assert record.kind == "tasks" and len(record.ids) == 3
    assert set(before.values()) == {StepState.OPEN}  # read from the server's own word, pending
    # every step was handed to a child, worked and reported done
    assert set(run.workers) == set(record.ids) and not run.failed
    assert run.outcome == dict.fromkeys(record.ids, StepState.DONE)
    assert run.summary == f"plan {record.number}: 3 steps done by sub-agents"
    # the server says closed; the graph draws done; %ollie plans says done
    stored = json.loads(store.read_text())["tasks"]
    assert [stored[i]["status"] for i in record.ids] == ["closed"] * 3
    assert after == dict.fromkeys(record.ids, StepState.DONE)
    view = plan_view(record.goal, record.steps, record.ids, after)
    assert view.statuses == (StepState.DONE,) * 3
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


KNOWN_WORDS = sorted(w for words in _WORDS.values() for w in words)


@st.composite
def respelled(draw: st.DrawFn, word: str) -> str:
    """`word` as a person or server might write it: any case, any run of spaces or dashes."""
    mask = draw(st.integers(0, 2 ** len(word) - 1))  # one draw: which letters are capitals
    cased = "".join(c.upper() if mask >> n & 1 else c for n, c in enumerate(word))
    gap = st.one_of(st.just("_"), st.text(alphabet=" -\t", min_size=1, max_size=3))
    parts = cased.split("_")
    joined = parts[0] + "".join(draw(gap) + part for part in parts[1:])
    pad = st.text(alphabet=" \t\n", max_size=2)
    return draw(pad) + joined + draw(pad)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # a shared, busy CI
@given(st.sampled_from(KNOWN_WORDS).flatmap(lambda w: st.tuples(st.just(w), respelled(w))))
def test_a_state_word_reads_the_same_in_any_case_and_spacing(pair):
    word, spelled = pair
    assert read_state(spelled) is read_state(word) is not StepState.UNKNOWN


def test_the_store_and_the_tasks_command_speak_words_the_agent_reads_as_themselves():
    """ollie-tasks keeps its own list (it imports nothing of the agent): each word reads back."""
    from ollie_nb.notebook.commands._args import TASK_STATUSES
    from ollie_nb.tasks import STATUSES
    from ollie_nb.tasks._store import LIST_FILTERS

    assert [str(read_state(word)) for word in STATUSES] == list(STATUSES)
    assert set(TASK_STATUSES) <= set(LIST_FILTERS)
    states = [w for w in TASK_STATUSES if w not in ("ready", "all")]
    assert [str(read_state(word)) for word in states] == states
