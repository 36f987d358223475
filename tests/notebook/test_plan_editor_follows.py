"""Every editor of a held plan follows the plan: a decision made by code, a command's core call
or another editor shows in each of them, and their buttons are off.

A real NotebookRuntime (its own loop thread) with a real AgentCore on the offline model and
review on; no kernel, so the editors' calls wait in place, draining the runtime as a
notebook's kernel thread does.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.core import AgentCore
from ollie_nb.llm import OfflineBackend
from ollie_nb.notebook._plan_editor import PlanEditor, held_plan_actions, plan_editor
from ollie_nb.notebook._runtime import NotebookRuntime
from ollie_nb.planning import Review

pytest.importorskip("ipywidgets")

CHAIN = "Ship it\n- Prepare\n- Build (after 1)\n- Release (after 2)"


@pytest.fixture
def runtime(tmp_path: Path) -> Any:
    """A runtime whose agent holds its plans for review, with plan 1 held."""

    def make() -> AgentCore:
        core = AgentCore(OfflineBackend(), workdir=tmp_path, autosave=False)
        core.plans.review = True
        return core

    rt = NotebookRuntime(make)
    rt.call(lambda: rt.core.submit(CHAIN))
    assert rt.core.plans.find(1).held
    yield rt
    rt.close()


def editors(runtime: NotebookRuntime, count: int = 2) -> list[PlanEditor]:
    """`count` editors of held plan 1, each listening to the core (as when shown twice)."""
    found = []
    for _ in range(count):
        record = runtime.call(_plain(lambda: runtime.core.plans.find(1)))
        draft = runtime.call(_plain(lambda: runtime.core.plans.draft(1)))
        found.append(plan_editor(runtime, record, draft))
    runtime.call(_plain(lambda: None))  # their listening has started on the loop
    return found


def _plain(fn: Any) -> Any:
    async def run() -> Any:
        return fn()

    return run


def assert_decided(ed: PlanEditor, words: str) -> None:
    assert ed.closed, ed.status.value
    assert words in ed.outcome and "waiting for your review" not in ed.header.value
    assert words in ed.header.value
    assert ed.buttons["approve"].disabled and ed.buttons["discard"].disabled
    assert ed.rows[0].title.disabled


def test_an_approval_from_code_shows_in_every_editor_of_the_plan(runtime) -> None:
    first, second = editors(runtime)
    runtime.call(lambda: runtime.core.plans.approve(1))
    for ed in (first, second):
        assert_decided(ed, "approved")
        assert "outside this editor" in ed.outcome


def test_a_discard_as_a_command_makes_it_shows_in_both_editors(runtime) -> None:
    first, second = editors(runtime)
    runtime.call(_plain(lambda: runtime.core.plans.discard(1)))  # what `%ollie plan discard 1` runs
    for ed in (first, second):
        assert_decided(ed, "discarded")


def test_a_decision_in_one_editor_shows_in_the_other(runtime) -> None:
    first, second = editors(runtime)
    first.comment.value = "fewer steps"
    first.buttons["reject"].click()
    assert first.closed and "sent back to the model" in first.outcome
    assert_decided(second, "sent back for changes")
    assert runtime.core.plans.find(1).review is Review.REJECTED


def test_a_stale_button_ends_with_the_decision_not_a_saving_error(runtime) -> None:
    draft = runtime.call(_plain(lambda: runtime.core.plans.draft(1)))
    deaf = replace(held_plan_actions(runtime, 1), decisions=None)  # the news has not arrived
    ed = PlanEditor(1, draft, deaf)
    runtime.call(lambda: runtime.core.plans.approve(1))
    runtime.drain()
    assert not ed.closed and not ed.buttons["approve"].disabled
    ed.buttons["approve"].click()
    assert ed.closed and "failed" not in ed.status.value
    assert "approved and saved already" in ed.outcome and ed.buttons["approve"].disabled


def test_an_editor_made_after_the_decision_shows_it_at_once(runtime) -> None:
    record = runtime.call(_plain(lambda: runtime.core.plans.find(1)))
    draft = runtime.call(_plain(lambda: runtime.core.plans.draft(1)))
    runtime.call(_plain(lambda: runtime.core.plans.discard(1)))
    ed = plan_editor(runtime, record, draft)  # from the record as it was: held
    runtime.call(_plain(lambda: None))
    assert_decided(ed, "discarded")
