"""The plan editor widget: rows edit the draft, problems disable Approve, every HTML piece escapes.

The editor is driven as the front end drives it (widget values set, buttons clicked);
decisions go to futures, as the core's do, and the click path is checked against a real
NotebookRuntime whose answer needs the kernel thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import Any

import pytest

from ollie_nb.notebook._plan_editor import EditorActions, PlanEditor, parse_after
from ollie_nb.notebook._runtime import NotebookRuntime
from ollie_nb.planning import PlanDraft, PlanValidationError, parse_plan

pytest.importorskip("ipywidgets")

EVIL = "<script>alert(1)</script>"


def draft(titles: tuple[str, ...] = ("spec", "build", "docs", "release")) -> PlanDraft:
    after = [[], [0], [0], [1, 2]]
    _, steps = parse_plan(
        {
            "goal": "ship it",
            "steps": [{"title": t, "after": after[i]} for i, t in enumerate(titles)],
        }
    )
    return PlanDraft.from_plan("ship it", steps, [f"t{i}" for i in range(len(titles))])


def answered(value: Any) -> concurrent.futures.Future[Any]:
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    future.set_result(value)
    return future


class Calls:
    """The decisions the editor asked for, each answered at once."""

    def __init__(self) -> None:
        self.made: list[tuple[Any, ...]] = []

    def actions(self) -> EditorActions:
        return EditorActions(
            drain=lambda: 0,
            approve=lambda d: self._made("approve", [r.title for r in d.ordered_rows()]),
            reject=lambda why, d: self._made("reject", why),
            discard=lambda: self._made("discard"),
        )

    def _made(self, *call: Any) -> concurrent.futures.Future[Any]:
        self.made.append(call)
        return answered(f"plan {call[0]}d")


def editor(d: PlanDraft | None = None, calls: Calls | None = None, **kw: Any) -> PlanEditor:
    return PlanEditor(1, d or draft(), (calls or Calls()).actions(), **kw)


def html_pieces(widget: Any) -> list[str]:
    """The value of every HTML widget under `widget`."""
    import ipywidgets as widgets

    found = [widget.value] if isinstance(widget, widgets.HTML) else []
    for child in getattr(widget, "children", ()):
        found += html_pieces(child)
    return found


def test_a_title_edited_in_its_row_is_in_the_draft_the_graph_and_the_approval() -> None:
    calls = Calls()
    ed = editor(calls=calls)
    ed.rows[1].title.value = "build the wheel"
    assert ed.draft.row(2).title == "build the wheel"
    assert "build the wheel" in ed.graph.value  # no kernel loop here: redrawn at once
    ed.buttons["approve"].click()
    assert calls.made == [("approve", ["spec", "build the wheel", "docs", "release"])]
    assert ed.closed and ed.outcome == "approved: plan approved"
    assert "approved: plan approved" in ed.header.value and "waiting" not in ed.header.value
    assert ed.rows[1].title.disabled and ed.buttons["approve"].disabled
    ed.buttons["discard"].click()  # locked: a second decision is not sent
    assert len(calls.made) == 1


def test_deleting_a_row_renumbers_the_rest_and_keeps_their_order() -> None:
    ed = editor()
    ed.rows[1].buttons["delete"].click()  # build; release waited for it
    assert [r.title.value for r in ed.rows] == ["spec", "docs", "release"]
    assert [r.number.value for r in ed.rows] == ["1.", "2.", "3."]
    assert ed.rows[2].after.value == "2, 1"
    assert "build" not in ed.graph.value and "release" in ed.graph.value
    assert "deleted step 2 ('build')" in ed.draft.edits()


def test_a_dependency_typed_into_after_is_added_and_a_bad_one_named() -> None:
    ed = editor()
    ed.rows[2].after.value = "1, 2"  # docs now also waits for build
    assert ed.draft.after_numbers(3) == [1, 2]
    assert not ed.buttons["approve"].disabled
    ed.rows[2].after.value = "1, two"
    assert ed.draft.after_numbers(3) == [1, 2]  # the draft keeps the last good value
    assert ed.rows[2].error.value == "after: 'two' is not a step number (write e.g. 1, 3)"
    assert ed.buttons["approve"].disabled
    ed.rows[2].after.value = "9"
    assert "there is no step 9" in ed.problems.value and ed.buttons["approve"].disabled
    ed.rows[2].after.value = "2"
    assert ed.problems.value == "" and not ed.buttons["approve"].disabled


def test_a_cycle_disables_approve_with_the_message_and_a_click_sends_nothing() -> None:
    calls = Calls()
    ed = editor(calls=calls)
    ed.rows[0].after.value = "4"  # spec waits for release, which waits for spec
    assert ed.buttons["approve"].disabled
    assert "steps 1 -&gt; 4 -&gt; 2 -&gt; 1 wait for each other (a cycle)" in ed.problems.value
    assert "the graph shows the last valid plan" in ed.graph.value
    ed.approve()  # what a click would do, were the button not disabled
    assert calls.made == [] and "cannot approve" in ed.status.value and not ed.closed


def test_rows_move_add_and_the_body_is_collapsed_until_opened() -> None:
    ed = editor()
    assert ed.rows[0].buttons["up"].disabled and ed.rows[-1].buttons["down"].disabled
    assert ed.rows[0].body.layout.display == "none"
    ed.rows[0].more.value = True
    assert ed.rows[0].body.layout.display == ""
    ed.rows[0].body.value = "write it down"
    assert ed.draft.row(1).body == "write it down"
    ed.rows[3].buttons["up"].click()
    assert [r.title.value for r in ed.rows] == ["spec", "build", "release", "docs"]
    ed.add_button.click()
    ed.rows[4].title.value = "announce"
    ed.rows[4].after.value = "3"
    assert [s.title for s in ed.draft.steps()][-1] == "announce"


def test_ask_for_changes_needs_a_comment() -> None:
    calls = Calls()
    ed = editor(calls=calls)
    ed.buttons["reject"].click()
    assert calls.made == [] and "write what should change" in ed.status.value
    ed.comment.value = "  split   the build "
    ed.buttons["reject"].click()
    assert calls.made == [("reject", "split the build")]
    assert ed.outcome.startswith("sent back to the model with your comment") and ed.comment.disabled


def test_a_failed_decision_says_why_and_leaves_the_editor_usable() -> None:
    failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
    failed.set_exception(PlanValidationError("the task server refused"))
    ed = PlanEditor(1, draft(), EditorActions(drain=lambda: 0, approve=lambda d: failed))
    ed.buttons["approve"].click()
    assert not ed.closed and "saving failed: the task server refused" in ed.status.value
    assert not ed.buttons["approve"].disabled and not ed.rows[0].title.disabled


def test_every_html_piece_escapes_model_text() -> None:
    d = draft((EVIL, "build", "docs", "release"))
    d.set_goal(EVIL)
    d.set_body(2, f"<img src=x onerror=alert(2)>{EVIL}")
    answer = f"saved {EVIL}"
    ed = PlanEditor(
        1, d, EditorActions(drain=lambda: 0, approve=lambda _: answered(answer), discard=None)
    )
    ed.rows[1].after.value = EVIL  # a typed value shown back in a problem
    ed.buttons["approve"].click()  # refused: the after field is not numbers
    pieces = html_pieces(ed.widget)
    assert any("&lt;script&gt;" in p for p in pieces)  # the title in the graph, escaped
    ed.rows[1].after.value = "1"
    ed.buttons["approve"].click()
    pieces = html_pieces(ed.widget)
    assert ed.closed and "&lt;script&gt;alert(1)&lt;/script&gt;" in ed.status.value
    for piece in pieces:
        assert "<script" not in piece.lower() and "<img" not in piece.lower(), piece


def test_the_text_fallback_of_the_graph_escapes_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from ollie_nb.notebook import _plan_editor
    from ollie_nb.planning import GraphvizUnavailable

    def no_dot(*_: Any, **__: Any) -> str:
        raise GraphvizUnavailable("cannot draw the plan graph: dot is not installed")

    monkeypatch.setattr(_plan_editor, "plan_svg", no_dot)
    ed = editor(draft((EVIL, "build", "docs", "release")))
    assert "dot is not installed" in ed.graph.value
    assert "1. [t0] &lt;script&gt;alert(1)&lt;/script&gt;" in ed.graph.value
    assert "<script" not in ed.graph.value


def test_the_text_form_shows_the_plan_and_the_commands() -> None:
    ed = editor()
    bundle = ed._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert text.startswith("plan 1, as a draft\nPlan: ship it\n1. [t0] spec\n2. [t1] build")
    assert "%ollie plan approve 1" in text and "%ollie plan reject 1 WHAT SHOULD CHANGE" in text
    ed.rows[1].title.value = "build it"
    assert "2. [t1] build it" in ed._repr_mimebundle_()["text/plain"]


def test_a_saved_plan_saves_its_edits_and_its_done_steps_are_read_only() -> None:
    saved: list[list[str]] = []

    def save(d: PlanDraft) -> concurrent.futures.Future[Any]:
        saved.append(d.edits())
        return answered(["t1 renamed"])

    ed = PlanEditor(
        2,
        draft(),
        EditorActions(drain=lambda: 0, save=save),
        statuses={"t0": "done", "t1": "in_progress"},
        locked={"t0"},
    )
    assert set(ed.buttons) == {"save", "cancel"}
    assert ed.rows[0].title.disabled and ed.rows[0].buttons["delete"].disabled
    assert not ed.rows[1].title.disabled
    assert "status&#45;done" in ed.graph.value  # dot writes the class escaped
    ed.buttons["save"].click()
    assert saved == [] and "nothing changed" in ed.status.value
    ed.rows[1].title.value = "build it"
    ed.buttons["save"].click()
    assert saved == [["step 2: title changed to 'build it'"]]
    assert ed.outcome == "saved: t1 renamed" and ed.rows[1].title.disabled


def test_parse_after_reads_numbers_and_names_what_is_not_one() -> None:
    assert parse_after(" 1, 3;4  5 ") == [1, 3, 4, 5] and parse_after("") == []
    with pytest.raises(PlanValidationError, match="'-1' is not a step number"):
        parse_after("-1")


def test_edits_in_a_burst_redraw_the_graph_once_after_a_pause() -> None:
    loop = asyncio.new_event_loop()
    try:
        ed = editor(loop=loop)
        run_until(loop, lambda: "spec" in ed.graph.value)
        drawn: list[str] = []
        real = ed.drawing.svg
        ed.drawing.svg = lambda: drawn.append("x") or real()  # type: ignore[method-assign]
        for title in ("b", "bu", "bui", "build X"):
            ed.rows[1].title.value = title
        assert drawn == []  # nothing drawn while the user types
        run_until(loop, lambda: "build X" in ed.graph.value)
        assert drawn == ["x"]
    finally:
        loop.close()


def run_until(loop: asyncio.AbstractEventLoop, ready: Any, timeout: float = 20.0) -> None:
    """Run `loop` (the kernel's, in a notebook) until `ready()` or fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        loop.run_until_complete(asyncio.sleep(0.05))


def test_a_click_does_not_wait_on_the_loop_for_work_the_kernel_thread_must_do() -> None:
    """The core's answer needs the kernel thread (as a notebook fallback backend does): a
    click handler that waited for it there would never return."""
    runtime = NotebookRuntime(lambda: None)  # type: ignore[arg-type,return-value]
    ran_on: list[str] = []

    async def approve_on_loop() -> str:
        main = runtime.on_main(lambda: ran_on.append(threading.current_thread().name))
        await asyncio.wrap_future(main)
        return "plan 1 saved"

    actions = EditorActions(drain=runtime.drain, approve=lambda d: runtime.submit(approve_on_loop))
    loop = asyncio.new_event_loop()
    try:
        ed = PlanEditor(1, draft(), actions, loop=loop)
        started = time.monotonic()
        ed.buttons["approve"].click()
        assert time.monotonic() - started < 1.0  # the handler returned: the kernel is free
        assert "saving …" in ed.status.value and ed.rows[0].title.disabled
        run_until(loop, lambda: ed.closed)
        assert ran_on == [threading.current_thread().name]
        assert ed.outcome == "approved: plan 1 saved"
    finally:
        loop.close()
        runtime.close()


def test_a_call_that_cannot_start_is_named_and_the_editor_stays_usable() -> None:
    def closed(_: PlanDraft) -> concurrent.futures.Future[Any]:
        raise RuntimeError("the ollie runtime is closed; %load_ext ollie_nb again")

    ed = PlanEditor(1, draft(), EditorActions(drain=lambda: 0, approve=closed))
    ed.buttons["approve"].click()
    assert "saving failed: the ollie runtime is closed" in ed.status.value
    assert not ed.closed and not ed.buttons["approve"].disabled
