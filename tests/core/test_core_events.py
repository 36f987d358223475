"""The core's typed events: what a turn that plans emits, and the small conversions they use."""

from __future__ import annotations

import pytest

from ollie_nb import core, llm
from ollie_nb.core import (
    Phase,
    PlanMade,
    ToolCalled,
    ToolFinished,
    TurnEnded,
    TurnResult,
    TurnStarted,
    TurnState,
    WatchWhat,
)
from ollie_nb.core._budget import Ledger, Scope
from ollie_nb.core._conversation import Conversation
from ollie_nb.llm import OfflineBackend

LIST_PROMPT = "Bake bread\n- Buy flour\n- Knead"


@pytest.mark.anyio
async def test_a_plan_whose_backend_fails_is_one_plan_event_with_the_users_warning(make_core):
    def broken(goal, steps):
        raise ConnectionError("sheet is offline")

    core = await make_core(fallback_plan_backend=broken)
    events: list = []
    await core.submit(LIST_PROMPT, events.append)
    (made,) = [e for e in events if isinstance(e, PlanMade)]
    assert made.record.warning.startswith("warning: ")  # the model's status line
    assert made.warning == "broken() failed (sheet is offline); this plan lives in context only."
    kinds = [type(e) for e in events]
    assert kinds[0] is TurnStarted and kinds[-1] is TurnEnded
    # the plan is announced between its call and the call's result
    called = next(i for i, e in enumerate(events) if isinstance(e, ToolCalled))
    finished = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    assert called < events.index(made) < finished
    assert events[called].tool == events[finished].tool == "reasoning_plan"
    assert events[called].id == events[finished].id


def test_turn_ended_tells_what_the_turn_result_says():
    result = TurnResult(
        reply="r", interrupted=True, error="e", blocked="b", steps=3, step_limit=True
    )
    ended = TurnEnded(result)
    assert ended.result is result
    told = (ended.reply, ended.interrupted, ended.error, ended.blocked, ended.steps)
    assert told == ("r", True, "e", "b", 3) and ended.step_limit


def test_a_settled_step_status_becomes_its_notice_kind():
    words = ["done", "cancelled", "failed", "open", "exploded", ""]
    assert [WatchWhat.of_status(w) for w in words] == [
        WatchWhat.DONE,
        WatchWhat.CANCELLED,
        WatchWhat.FAILED,
        WatchWhat.REOPENED,
        WatchWhat.FAILED,  # a word the run does not know counts as a failure, as the run counts it
        WatchWhat.FAILED,
    ]


def test_the_phase_shows_as_the_status_words_with_the_running_tool():
    state = TurnState(Conversation(), Ledger(Scope.SESSION))
    assert state.label == "idle"
    state.enter(Phase.TOOL, "execute_code")
    assert (state.phase, state.label) == (Phase.TOOL, "tool:execute_code")
    state.enter(Phase.STREAMING)
    assert (state.label, state.tool) == ("streaming", "")


@pytest.mark.anyio
async def test_the_core_passes_on_the_models_deltas_as_one_class_each(make_core):
    """A script matching the model's stream and the core's events matches one TextDelta."""
    assert core.TextDelta is llm.TextDelta and core.ReasoningDelta is llm.ReasoningDelta
    events: list = []
    agent = await make_core(OfflineBackend(turns=["hello there"]), start=False)
    await agent.submit("hi", events.append)
    assert "".join(e.text for e in events if isinstance(e, llm.TextDelta)) == "hello there"
