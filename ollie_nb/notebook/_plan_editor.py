"""PlanEditor: a plan's graph and its steps as editable rows, with the review's decisions.

A held plan (review on) shows here under the `reasoning_plan` call: the user edits
titles, descriptions and what each step waits for, adds, moves and deletes steps, and
the draft is checked on every edit (`PlanDraft.problems`); Approve stays disabled while
it is invalid. Ask for changes sends a comment back to the model; Discard drops the
plan. A saved plan (`%ollie plan edit N`) opens in the same editor with Save changes /
Cancel, its done or claimed steps read-only.

Clicks arrive on the kernel thread, after the cell that showed the editor finished (a
held plan ends the model's turn) or while a background turn runs. A click never waits
for the core there: the core call is submitted to the runtime's loop, and a tick on the
kernel's own event loop reads its answer, running meanwhile whatever the core hands
back to the kernel thread (a notebook fallback backend, an approval), so nothing waits
on a thread that waits on it. The graph is redrawn off the kernel thread, a short
while after the last edit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ollie_nb.core import PlanDecided
from ollie_nb.errors import PlanDecidedError
from ollie_nb.notebook._display import esc
from ollie_nb.notebook._plans import _DRAWER, fit_to_cell
from ollie_nb.planning import (
    GraphvizUnavailable,
    PlanDraft,
    PlanRecord,
    PlanValidationError,
    Review,
    StepState,
    plan_svg,
    readable_rankdir,
)

if TYPE_CHECKING:
    from ollie_nb.notebook._runtime import NotebookRuntime

DEBOUNCE = 0.4  # seconds after the last edit before the graph is redrawn
TICK = 0.1  # seconds between two looks at a core call's answer
_MUTED = "color: var(--jp-ui-font-color2, #666)"
_ERROR = "color: var(--jp-error-color1, #c62828)"
_NUMBERS = re.compile(r"[\s,;]+")


# -- what the buttons do --------------------------------------------------------------


@dataclass(frozen=True)
class EditorActions:
    """The editor's way to the core: each call returns a future of the core's answer.

    `drain` runs what the core hands back to the kernel thread while a call is under
    way. A held plan has approve / reject / discard, a saved one has save. `follow`, after
    an approval or a request for changes, runs the prompt it queued and returns the widget
    that shows that turn (None: it stays queued, e.g. while another turn runs). `keep` hands
    the core a copy of the draft after each burst of edits, so `%ollie plan approve N` and
    the saved session have the user's edits too.
    """

    drain: Callable[[], Any]
    approve: Callable[[PlanDraft], concurrent.futures.Future[Any]] | None = None
    reject: Callable[[str, PlanDraft], concurrent.futures.Future[Any]] | None = None
    discard: Callable[[], concurrent.futures.Future[Any]] | None = None
    save: Callable[[PlanDraft], concurrent.futures.Future[Any]] | None = None
    follow: Callable[[], Any] | None = None  # after approve / reject: the turn telling the model
    keep: Callable[[PlanDraft], concurrent.futures.Future[Any]] | None = None  # the core keeps it
    decisions: Callable[[Callable[[PlanRecord], None]], Callable[[], None]] | None = None
    """Hands the editor each decision on its plan (the plan's record), wherever it was made,
    on the kernel thread; returns the call that stops it."""

    @property
    def saved_plan(self) -> bool:
        return self.save is not None


def _on_loop(runtime: NotebookRuntime, call: Callable[[], Any]) -> concurrent.futures.Future[Any]:
    """Run a core method on the runtime's loop (awaiting it when it is a coroutine)."""

    async def run() -> Any:
        result = call()
        return await result if asyncio.iscoroutine(result) else result

    return runtime.submit(run)


def plan_decisions(
    runtime: NotebookRuntime, number: int
) -> Callable[[Callable[[PlanRecord], None]], Callable[[], None]]:
    """The core's decisions on plan `number`, each handed to `show` on the kernel thread (when
    it next pumps or drains the runtime: the caller of a decision does); one already made
    when the editor starts listening is handed over at once."""

    def listen(show: Callable[[PlanRecord], None]) -> Callable[[], None]:
        core = runtime.core

        def heard(event: PlanDecided) -> None:  # on the runtime's loop
            if event.record.number == number:
                runtime.on_main(lambda: show(event.record))

        def start() -> None:
            core.plans.listen(heard)
            record = core.plans.find(number)
            if record is not None and record.review is not None and not record.held:
                heard(PlanDecided(record))

        runtime.call_soon(start)
        return lambda: runtime.call_soon(lambda: core.plans.unlisten(heard))

    return listen


def held_plan_actions(
    runtime: NotebookRuntime, number: int, follow: Callable[[], Any] | None = None
) -> EditorActions:
    """The decisions on held plan `number`, made by the runtime's core."""
    core = lambda: runtime.core  # noqa: E731  (the core of the moment: agents switch)
    return EditorActions(
        drain=runtime.drain,
        follow=follow,
        decisions=plan_decisions(runtime, number),
        keep=lambda d: _on_loop(runtime, lambda: core().plans.keep_draft(number, d)),
        approve=lambda d: _on_loop(runtime, lambda: core().plans.approve(number, d)),
        reject=lambda why, d: _on_loop(runtime, lambda: core().plans.reject(number, why, d)),
        discard=lambda: _on_loop(runtime, lambda: core().plans.discard(number)),
    )


def saved_plan_actions(runtime: NotebookRuntime, number: int) -> EditorActions:
    """Changes to saved plan `number`, sent to its task server by the runtime's core."""
    return EditorActions(
        drain=runtime.drain,
        save=lambda d: _on_loop(runtime, lambda: runtime.core.plans.edit_saved(number, d)),
    )


# -- one row --------------------------------------------------------------------------


def parse_after(text: str) -> list[int]:
    """Step numbers typed as `1, 3` or `1 3`; PlanValidationError naming what is not one."""
    numbers = []
    for word in _NUMBERS.split(text.strip()):
        if not word:
            continue
        if not word.isdigit():
            raise PlanValidationError(f"after: {word!r} is not a step number (write e.g. 1, 3)")
        numbers.append(int(word))
    return numbers


class StepRow:
    """The widgets of one step: number, title, after, body (collapsed), up / down / delete."""

    def __init__(self, editor: PlanEditor, number: int, locked: bool) -> None:
        import ipywidgets as widgets

        row = editor.draft.row(number)
        self.key = row.key
        self.locked = locked
        self.number = widgets.Label(f"{number}.", layout={"width": "2.5em"})
        wide = {"flex": "1 1 auto", "width": "auto", "min_width": "6em"}  # not the 300 px default
        self.title = widgets.Text(row.title, placeholder="title", layout=wide)
        after = ", ".join(str(n) for n in editor.draft.after_numbers(number))
        self.after = widgets.Text(after, placeholder="after: 1, 2", layout={"width": "6.5em"})
        self.after.add_class("ollie-after")
        self.body = widgets.Textarea(row.body, placeholder="description", rows=3)
        self.body.layout = widgets.Layout(width="100%", display="none")
        small = {"width": "2.4em", "padding": "0"}
        self.more = widgets.ToggleButton(
            False, description="…", tooltip="description", layout=small
        )
        self.buttons = {
            name: widgets.Button(description=text, tooltip=tip, layout=small)
            for name, text, tip in (
                ("up", "↑", "move up"),
                ("down", "↓", "move down"),
                ("delete", "✕", "delete this step"),
            )
        }
        self.error = widgets.Label("")  # plain text: a typed value shown back is not HTML
        self.error.layout.display = "none"
        self._wire(editor, widgets)
        line = [self.number, self.title, self.after, self.more, *self.buttons.values()]
        self.box = widgets.VBox(
            [widgets.HBox(line, layout={"width": "100%"}), self.body, self.error]
        )
        self.box.add_class("ollie-plan-row")
        if locked:
            self.box.add_class("ollie-locked")
            self.lock()

    def _wire(self, editor: PlanEditor, widgets: Any) -> None:
        self.title.observe(lambda c: editor.edit(self.key, "title", c["new"]), names="value")
        self.body.observe(lambda c: editor.edit(self.key, "body", c["new"]), names="value")
        self.after.observe(lambda c: editor.edit(self.key, "after", c["new"]), names="value")
        self.more.observe(lambda c: self._show_body(bool(c["new"])), names="value")
        self.buttons["up"].on_click(lambda _: editor.move(self.key, -1))
        self.buttons["down"].on_click(lambda _: editor.move(self.key, +1))
        self.buttons["delete"].on_click(lambda _: editor.delete(self.key))

    def _show_body(self, shown: bool) -> None:
        self.body.layout.display = "" if shown else "none"

    def show_error(self, text: str) -> None:
        self.error.value = text
        self.error.layout.display = "" if text else "none"

    def lock(self) -> None:
        for widget in (self.title, self.after, self.body, *self.buttons.values()):
            widget.disabled = True


# -- the graph ------------------------------------------------------------------------


Poll = Callable[[concurrent.futures.Future[Any], Callable[[], None]], None]


class DraftGraph:
    """A draft's graph in an HTML widget, drawn by dot off the kernel thread; while the draft
    is invalid the last valid graph stays, marked as such."""

    def __init__(self, draft: PlanDraft, statuses: Mapping[str, StepState], rankdir: str) -> None:
        import ipywidgets as widgets

        self.draft = draft
        self.statuses = statuses  # task id -> status word (a saved plan's steps)
        self.rankdir = rankdir
        self.widget = widgets.HTML("", layout=widgets.Layout(width="100%", overflow="auto"))
        self.widget.add_class("ollie-plan-graph")
        self._svg = ""  # the last graph drawn of a valid draft
        self._drawing: concurrent.futures.Future[str] | None = None

    def svg(self) -> str:
        """The draft's graph, numbered as the rows are (PlanValidationError while invalid)."""
        rows = self.draft.ordered_rows()
        steps = self.draft.steps()
        ids = [str(self.draft.number_of(r.key)) for r in rows]
        statuses = {i: self.statuses.get(r.task_id, "") for i, r in enumerate(rows)}
        statuses = {i: s for i, s in statuses.items() if s}
        rankdir = readable_rankdir(steps, self.rankdir)  # a long chain: top to bottom
        return plan_svg(self.draft.goal, steps, ids, statuses or None, rankdir=rankdir)

    def draw(self, poll: Poll | None) -> None:
        """Draw the draft as it is now; `poll` shows the drawing when it is done (None: wait)."""
        if not self.draft.valid:
            self.widget.value = self._html(stale=True)
            return
        future = _DRAWER.submit(self.svg)
        self._drawing = future
        if poll is None:
            concurrent.futures.wait([future])
            self._drawn(future)
            return
        poll(future, lambda: self._drawn(future))

    def _drawn(self, future: concurrent.futures.Future[str]) -> None:
        if future is not self._drawing:
            return  # a later edit is being drawn
        error = future.exception()
        if isinstance(error, GraphvizUnavailable):
            self.widget.value = (
                f"<div style='{_MUTED}'>⚠ {esc(str(error))}</div>{self._text_html()}"
            )
            return
        if error is None:
            self._svg = fit_to_cell(future.result())
        self.widget.value = self._html(stale=False)

    def _html(self, stale: bool) -> str:
        note = ""
        if stale:
            note = f"<div style='{_MUTED}'>the graph shows the last valid plan</div>"
        body = f'<div class="ollie-plan">{self._svg}</div>' if self._svg else self._text_html()
        return note + body

    def _text_html(self) -> str:
        return f"<pre>{esc(self.draft.text())}</pre>"


# -- the editor -----------------------------------------------------------------------


class PlanEditor:
    """A plan being reviewed or edited: graph, rows, live problems, and the decisions."""

    def __init__(
        self,
        number: int,
        draft: PlanDraft,
        actions: EditorActions,
        *,
        statuses: Mapping[str, StepState] | None = None,
        locked: Collection[str] = (),
        rankdir: str = "LR",
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        import ipywidgets as widgets  # on first use: a widget costs its import only when made

        self.number = number
        self.draft = draft
        self.actions = actions
        self.statuses = dict(statuses or {})  # task id -> status word (a saved plan's steps)
        self.locked = frozenset(locked)  # task ids of steps done or claimed: not editable
        self.rankdir = rankdir
        self.rows: list[StepRow] = []
        self.outcome = ""  # what the decision did, once made
        self.closed = False
        self._field_errors: dict[int, str] = {}  # row key -> why its after field is not used
        self._edits = 0  # counts edits, so only the last one of a burst redraws
        self._deciding = False
        self._loop = loop or _kernel_loop()  # None: no kernel (a script), calls wait in place
        self._elsewhere: PlanRecord | None = None  # a decision made elsewhere while deciding
        self._build(widgets)
        self._rebuild_rows()
        self.draw()
        listen = self.actions.decisions
        self._stop_listening = listen(self.decided_elsewhere) if listen is not None else None
        self.widget.observe(self._widget_closed, names="comm")

    # building -------------------------------------------------------------------------

    def _build(self, widgets: Any) -> None:
        self.header = widgets.HTML(self._header_html())
        self.goal = widgets.Text(self.draft.goal, description="goal", layout={"width": "100%"})
        self.goal.observe(lambda c: self.edit(None, "goal", c["new"]), names="value")
        self.drawing = DraftGraph(self.draft, self.statuses, self.rankdir)
        self.graph = self.drawing.widget
        self.rows_box = widgets.VBox([], layout={"width": "100%"})
        self.add_button = widgets.Button(description="add step", icon="plus")
        self.add_button.on_click(lambda _: self.add_step())
        self.problems = widgets.HTML("")
        self.problems.add_class("ollie-plan-problems")
        self.comment = widgets.Text(placeholder="what should change", layout={"flex": "1 1 20em"})
        self.status = widgets.HTML("")
        self.status.add_class("ollie-plan-status")
        self.buttons = self._decision_buttons(widgets)
        self.widget = widgets.VBox(
            [  # the graph above the rows, both at the cell's width: labels and titles readable
                self.header,
                self.goal,
                self.graph,
                self.rows_box,
                self.add_button,
                self.problems,
                widgets.HBox([*self.buttons.values(), *self._comment_box()]),
                self.status,
            ],
            layout=widgets.Layout(width="100%"),
        )
        self.widget.add_class("ollie-plan-editor")

    def _decision_buttons(self, widgets: Any) -> dict[str, Any]:
        fit = {"width": "auto"}
        if self.actions.saved_plan:
            names = [("save", "Save changes", "success"), ("cancel", "Cancel", "")]
        else:
            names = [
                ("approve", "Approve", "success"),
                ("reject", "Ask for changes", "warning"),
                ("discard", "Discard", "danger"),
            ]
        buttons = {
            name: widgets.Button(description=text, button_style=style, layout=fit)
            for name, text, style in names
        }
        for name, button in buttons.items():
            button.on_click(lambda _, n=name: getattr(self, n)())
        return buttons

    def _comment_box(self) -> list[Any]:
        return [] if self.actions.saved_plan else [self.comment]

    def _header_html(self) -> str:
        what = "saved plan" if self.actions.saved_plan else "plan"
        if self.outcome:
            return f"<b>ollie {what} {self.number}</b> <span style='{_MUTED}'>{esc(self.outcome)}</span>"
        note = (
            "edit the steps, then save; done or claimed steps cannot change"
            if self.actions.saved_plan
            else "waiting for your review: edit the steps, then approve, ask for changes or discard"
        )
        return f"<b>ollie {what} {self.number}</b> <span style='{_MUTED}'>{esc(note)}</span>"

    def _rebuild_rows(self) -> None:
        """New rows for the draft as it is (numbers and `after` fields shift after a move)."""
        self._field_errors.clear()
        self.rows = [
            StepRow(self, n, self.draft.row(n).task_id in self.locked)
            for n in range(1, len(self.draft) + 1)
        ]
        for i, row in enumerate(self.rows):
            row.buttons["up"].disabled = row.locked or i == 0
            row.buttons["down"].disabled = row.locked or i == len(self.rows) - 1
        self.rows_box.children = [r.box for r in self.rows]
        self._check()

    # editing --------------------------------------------------------------------------

    def edit(self, key: int | None, field: str, value: str) -> None:
        """A field changed in the widget: into the draft, then check and redraw."""
        if self.closed or self._deciding:
            return
        if key is None:
            self.draft.set_goal(value)
        else:
            number = self.draft.number_of(key)
            if field == "title":
                self.draft.set_title(number, value)
            elif field == "body":
                self.draft.set_body(number, value)
            else:
                self._edit_after(key, number, value)
        self._changed()

    def _edit_after(self, key: int, number: int, text: str) -> None:
        try:
            self.draft.set_after(number, parse_after(text))
        except PlanValidationError as exc:
            self._field_errors[key] = str(exc)
        else:
            self._field_errors.pop(key, None)
        row = next(r for r in self.rows if r.key == key)
        row.show_error(self._field_errors.get(key, ""))

    def add_step(self, title: str = "new step") -> None:
        if self.closed or self._deciding:
            return
        self.draft.add(title)
        self._rebuild_rows()
        self._changed()

    def delete(self, key: int) -> None:
        if self.closed or self._deciding:
            return
        self.draft.delete(self.draft.number_of(key))
        self._rebuild_rows()
        self._changed()

    def move(self, key: int, by: int) -> None:
        number = self.draft.number_of(key)
        if self.closed or self._deciding or not 1 <= number + by <= len(self.draft):
            return
        self.draft.move(number, number + by)
        self._rebuild_rows()
        self._changed()

    def _changed(self) -> None:
        self._check()
        self._edits += 1
        edits = self._edits
        if self._loop is None:
            self._settled()
            return
        self._later(DEBOUNCE, lambda: self._settled() if edits == self._edits else None)

    def _settled(self) -> None:
        """The user paused: redraw the graph, and let the core keep the draft as it is."""
        self.draw()
        if self.actions.keep is None or self.closed or self._deciding:
            return
        future = self.actions.keep(self.draft.copy())
        self._poll(future, lambda: self._kept(future))

    def _kept(self, future: concurrent.futures.Future[Any]) -> None:
        error = None if future.cancelled() else future.exception()
        if error is not None and not self.closed:
            self._say(f"your edits are only in this editor: {error}", error=True)

    # checking -------------------------------------------------------------------------

    def problem_list(self) -> list[str]:
        """Why the draft cannot be approved or saved now (empty: it can)."""
        fields = [
            f"step {self.draft.number_of(k)}: {why}"
            for k, why in self._field_errors.items()
            if any(r.key == k for r in self.draft.rows)
        ]
        return fields + self.draft.problems()

    def _check(self) -> None:
        problems = self.problem_list()
        self.problems.value = "".join(f"<div style='{_ERROR}'>✖ {esc(p)}</div>" for p in problems)
        ok = "save" if self.actions.saved_plan else "approve"
        self.buttons[ok].disabled = self.closed or bool(problems)

    def draw(self, wait: bool = False) -> None:
        """Redraw the graph off the kernel thread (`wait`: until it is drawn)."""
        self.drawing.draw(self._poll if self._loop is not None and not wait else None)

    # deciding -------------------------------------------------------------------------

    def decided_elsewhere(self, record: PlanRecord) -> None:
        """The plan was decided by code, a command or another editor: show it, buttons off
        (a click under way ends with it instead of an error)."""
        if self.closed:
            return
        if self._deciding:
            self._elsewhere = record
            return
        self._close(elsewhere_line(record))

    def approve(self) -> None:
        problems = self.problem_list()
        if self.closed or self.actions.approve is None:
            return
        if problems:
            self._say(f"cannot approve: {problems[0]}", error=True)
            return
        approve = self.actions.approve
        self._decide("saving …", lambda: approve(self.draft), "approved", follow=True)

    def reject(self) -> None:
        reason = " ".join(self.comment.value.split())
        if self.closed or self.actions.reject is None:
            return
        if not reason:
            self._say("write what should change in the box first", error=True)
            return
        reject = self.actions.reject
        self._decide(
            "sending your comment …",
            lambda: reject(reason, self.draft),
            "sent back to the model with your comment (its revision is held again)",
            follow=True,
        )

    def discard(self) -> None:
        if self.closed or self.actions.discard is None:
            return
        self._decide("discarding …", self.actions.discard, "discarded: nothing was saved")

    def save(self) -> None:
        problems = self.problem_list()
        if self.closed or self.actions.save is None:
            return
        if problems:
            self._say(f"cannot save: {problems[0]}", error=True)
            return
        if not self.draft.changed:
            self._say("nothing changed", error=False)
            return
        save = self.actions.save
        self._decide("saving …", lambda: save(self.draft), "saved")

    def cancel(self) -> None:
        if not self.closed:
            self._close("cancelled: the saved plan is unchanged")

    def _decide(
        self,
        doing: str,
        start: Callable[[], concurrent.futures.Future[Any]],
        done: str,
        follow: bool = False,
    ) -> None:
        """Start the core call; wait for its answer without blocking the kernel thread, then
        lock, or say why not (a call that cannot even start, e.g. a closed runtime, too)."""
        try:
            future = start()
        except Exception as exc:
            self._say(f"{doing.rstrip(' …')} failed: {exc}", error=True)
            return
        self._deciding = True
        self._lock_all()
        self._say(doing, error=False)
        self._poll(future, lambda: self._answered(future, doing, done, follow))

    def _answered(
        self, future: concurrent.futures.Future[Any], doing: str, done: str, follow: bool
    ) -> None:
        self._deciding = False
        error = future.exception() if not future.cancelled() else RuntimeError("cancelled")
        if isinstance(error, PlanDecidedError):  # a stale click: the decision was made elsewhere
            self._close(elsewhere_line(self._elsewhere) if self._elsewhere else str(error))
            return
        if error is not None:
            self._rebuild_rows()  # editable again, as the draft is
            for widget in (self.goal, self.comment, self.add_button, *self.buttons.values()):
                widget.disabled = False
            self._check()
            self._say(f"{doing.rstrip(' …')} failed: {error}", error=True)
            return
        self._close(outcome_line(done, future.result()))
        if follow and self.actions.follow is not None:
            self._follow(self.actions.follow)

    def _follow(self, follow: Callable[[], Any]) -> None:
        """The turn that tells the model of the decision, shown under the editor."""
        try:
            turn = follow()
        except Exception as exc:  # the decision stands; only its turn did not start
            self._say(f"{self.outcome}; the model is told at its next turn ({exc})", error=False)
            return
        if turn is None:
            self._say(f"{self.outcome}; the model is told at its next turn", error=False)
            return
        self.widget.children = (*self.widget.children, getattr(turn, "widget", turn))

    def _poll(self, future: concurrent.futures.Future[Any], then: Callable[[], None]) -> None:
        """Call `then` on the kernel thread once `future` is done, draining the runtime meanwhile."""
        if self._loop is None:
            while not future.done():
                self.actions.drain()
                concurrent.futures.wait([future], timeout=TICK)
            self.actions.drain()
            then()
            return

        def tick() -> None:
            self.actions.drain()
            if future.done():
                self.actions.drain()  # what the core handed over as it finished
                then()
            else:
                self._later(TICK, tick)

        self._later(TICK, tick)

    def _later(self, delay: float, fn: Callable[[], Any]) -> None:
        """Run `fn` on the kernel's loop after `delay` seconds, from whatever thread calls.

        A widget's messages may be handled while the loop sleeps in its selector (a plain
        `call_later` from there is not seen until something else wakes it, the next cell):
        the thread-safe call wakes it.
        """
        loop = self._loop
        if loop is None:  # no kernel: nothing to wait on
            fn()
            return
        loop.call_soon_threadsafe(loop.call_later, delay, fn)

    def _close(self, outcome: str) -> None:
        """The decision is made: show it and lock every field and button."""
        self.closed = True
        self.outcome = outcome
        self.header.value = self._header_html()
        self._say(outcome, error=False)
        self._lock_all()
        self._release()

    def _widget_closed(self, change: Mapping[str, Any]) -> None:
        """The editor's widget was closed: no one sees it, so it stops listening for decisions."""
        if change["new"] is None:
            self._release()

    def _release(self) -> None:
        """Stop listening for the plan's decisions (the listener would stay for the session)."""
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None

    def _lock_all(self) -> None:
        for row in self.rows:
            row.lock()
        for widget in (self.goal, self.comment, self.add_button, *self.buttons.values()):
            widget.disabled = True

    def _say(self, text: str, error: bool) -> None:
        style = _ERROR if error else ""
        self.status.value = f"<span style='{style}'>{esc(text)}</span>"

    # text -----------------------------------------------------------------------------

    def text(self) -> str:
        """The draft as plan text (rows in the user's order), then the commands or the outcome."""
        lines = [f"plan {self.number}, as a draft", self.draft.text()]
        if self.outcome:
            lines.append(self.outcome)
        elif self.actions.saved_plan:
            n = self.number
            lines.append(
                f"edit it from code: d = ollie_nb.agent().plan_draft({n}); d.set_title(1, '...'); "
                f"then ollie_nb.agent().edit_saved_plan({n}, d)"
            )
        else:
            lines += review_commands(self.number)
        return "\n".join(lines)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):
            bundle["text/plain"] = self.text()
        return bundle


def review_commands(number: int) -> list[str]:
    """What a text front end shows under a held plan: the commands that decide on it."""
    return [
        "waiting for your review:",
        f"  %ollie plan approve {number}",
        f"  %ollie plan reject {number} WHAT SHOULD CHANGE",
        f"  %ollie plan discard {number}",
        f"  %ollie plan edit {number}   (the editor)",
    ]


def outcome_line(done: str, result: Any) -> str:
    """The editor's last line: the decision, then what the core said of it (a plan's status
    line, the changes made to a saved plan)."""
    if isinstance(result, PlanRecord):
        if result.warning:
            return f"{done}, with a warning: {result.warning}"
        saved = f"{len(result.ids)} steps saved ({', '.join(result.ids)})" if result.ids else ""
        return f"{done}: {saved}" if done == "approved" and saved else done
    if isinstance(result, (list, tuple)):
        return f"{done}: " + "; ".join(str(x) for x in result) if result else f"{done}: no change"
    if isinstance(result, str) and result.strip():
        return f"{done}: {result.strip()}"
    return done


_DECIDED = {
    Review.APPROVED: "approved",
    Review.REJECTED: "sent back for changes",
    Review.DISCARDED: "discarded: nothing was saved",
}


def elsewhere_line(record: PlanRecord) -> str:
    """The editor's last line for a decision made outside it (code, a command, an editor)."""
    done = _DECIDED.get(record.review, "decided") if record.review else "decided"
    line = outcome_line(done, record) if record.review is Review.APPROVED else done
    return f"{line} (outside this editor)"


# -- the editor of a plan of this session ------------------------------------------------


def locked_ids(statuses: Mapping[str, StepState]) -> set[str]:
    """The steps a saved plan's editor cannot change: done, or claimed (someone works them)."""
    return {
        task_id for task_id, state in statuses.items() if state is StepState.DONE or state.is_active
    }


def plan_editor(
    runtime: NotebookRuntime,
    record: PlanRecord,
    draft: PlanDraft,
    statuses: Mapping[str, StepState] | None = None,
    rankdir: str = "LR",
    follow: Callable[[], Any] | None = None,
) -> PlanEditor:
    """The editor of plan `record`: its review when it is held, else its saved steps' editing."""
    if record.held:
        actions = held_plan_actions(runtime, record.number, follow)
        return PlanEditor(record.number, draft, actions, rankdir=rankdir)
    statuses = dict(statuses or {})
    return PlanEditor(
        record.number,
        draft,
        saved_plan_actions(runtime, record.number),
        statuses=statuses,
        locked=locked_ids(statuses),
        rankdir=rankdir,
    )


def held_plan_editor(
    runtime: NotebookRuntime,
    record: PlanRecord,
    rankdir: str = "LR",
    follow: Callable[[], Any] | None = None,
) -> PlanEditor:
    """The editor of a plan just held, shown under the call that made it."""
    draft = PlanDraft.from_plan(record.goal, record.steps)  # as made: nothing edited yet
    return plan_editor(runtime, record, draft, rankdir=rankdir, follow=follow)


def _kernel_loop() -> asyncio.AbstractEventLoop | None:
    """The kernel's event loop (the one clicks arrive on), or None outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    if getattr(get_ipython(), "kernel", None) is None:
        return None
    try:
        return asyncio.get_event_loop()
    except RuntimeError:
        return None
