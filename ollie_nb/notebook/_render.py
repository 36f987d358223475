"""Render a turn's events on the kernel thread: foreground displays or a background widget.

Streaming text goes to a "live" display that is updated in place and returns to
empty when the piece of text is complete; the finished piece is then shown as
its own output. So the saved notebook and a re-run produce the same outputs,
whatever the timing of the stream.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from ollie_nb import core
from ollie_nb.notebook._display import (
    Footer,
    Live,
    LiveThinking,
    NoticeView,
    Reply,
    TextBlock,
    Thinking,
    ToolBlock,
)
from ollie_nb.notebook._plans import PlanGraphView
from ollie_nb.planning import StepState


class Settings:
    """The magics' traits a renderer needs (read at turn start)."""

    def __init__(
        self,
        *,
        show_tools: bool = True,
        result_chars: int = 2000,
        stream_interval: float = 0.1,
        rankdir: str = "LR",
        usage_footer: bool = True,
        show_plans: bool = True,
        remote_images: bool = False,
    ) -> None:
        self.show_tools = show_tools
        self.result_chars = result_chars
        self.stream_interval = stream_interval
        self.rankdir = rankdir
        self.usage_footer = usage_footer
        self.show_plans = show_plans
        self.remote_images = remote_images  # replies load their images (else: links)


class TurnView:
    """Turns events into outputs; `show(obj)` appends an output, `live()` makes an updatable one."""

    def __init__(
        self,
        settings: Settings,
        show: Callable[[Any], None],
        live: Callable[[Any], Callable[[Any], None]],
        plan_statuses: Callable[[Any], dict[str, StepState]] | None = None,
        review: Callable[[Any], Any] | None = None,
    ) -> None:
        self.settings = settings
        self._review = review  # makes the editor of a plan held for review
        self._show = show
        self._make_live = live
        self._plan_statuses = plan_statuses
        self._update: Callable[[Any], None] | None = None
        self._text: list[str] = []
        self._thinking: list[str] = []  # reasoning of the current response, shown apart
        self._think_update: Callable[[Any], None] | None = None
        self._last_update = 0.0
        self._calls: dict[str, core.ToolCalled] = {}
        self._started = time.perf_counter()
        self._usage: core.UsageReported | None = None
        self._turn_usage = (0, 0, 0)  # tokens in, out and requests of this cell's turns
        self.plans: list[PlanGraphView] = []
        self._plan_updates: list[Callable[[Any], None]] = []
        self._undrawn: list[PlanGraphView] = []  # shown as text while dot draws them
        self._pending_plans: list[PlanGraphView] = []  # shown under the call that made them
        self._held: list[Any] = []  # editors of held plans: shown last, under the replies
        self.progress: tuple[int, int] | None = None  # (position, total) in the drained queue
        self.plan_progress: tuple[int, int] | None = None  # (done, total) of the worked plan
        self._told: dict[int, dict[str, StepState]] = {}  # a queue plan's states, as told
        self.result_reply = ""
        self.interrupted = False
        self._retry: tuple[str, int, float] | None = None
        self._retry_shown = -1

    # live area -----------------------------------------------------------

    def _live(self, markdown: str) -> None:
        if self._update is None:
            self._update = self._make_live(Live(""))
        self._update(Live(markdown, self.settings.remote_images))

    def _settle(self) -> None:
        """Return the live area to empty and show the finished text as its own output."""
        self._settle_thinking()
        self._show_pending_plans()
        text = "".join(self._text)
        self._text = []
        if self._update is not None:
            self._update(Live(""))
            self._update = None
        if text.strip():
            self._show(Reply(text.strip(), self.settings.remote_images))

    def _settle_thinking(self) -> None:
        """The reasoning is complete: its live element empties, the whole of it is shown."""
        text = "".join(self._thinking)
        self._thinking = []
        if self._think_update is not None:
            self._think_update(Live(""))
            self._think_update = None
        if text.strip():
            self._show(Thinking(text))

    # events --------------------------------------------------------------

    def __call__(self, event: core.Event) -> None:
        if not isinstance(event, core.Retrying):
            self._retry = None  # the wait is over once anything else happens
        match event:
            case core.TurnStarted():
                self._on_turn_started(event)
            case core.TextDelta():
                self._on_text(event)
            case core.ReasoningDelta():
                self._on_reasoning(event)
            case core.ToolCalled():
                self._on_tool_called(event)
            case core.ToolFinished():
                self._on_tool_finished(event)
            case core.PlanMade():
                self._on_plan(event)
            case core.UsageReported():
                self._usage = event
                self._turn_usage = (
                    self._turn_usage[0] + event.input_tokens,
                    self._turn_usage[1] + event.output_tokens,
                    self._turn_usage[2] + 1,
                )
            case core.Retrying():
                self._on_retry(event)
            case core.Notice():
                self._settle()
                self._show(NoticeView.of(event))
            case core.TurnEnded():
                self._on_turn_ended(event)
            case core.PlanProgress(plan=plan, done=done, total=total, states=states):
                self.plan_progress = (done, total)
                self._told[plan] = dict(states)
                self._refresh_plans()

    def restart(self) -> None:
        """A new turn of its own (a worker's next step): its usage and time count afresh."""
        self._turn_usage = (0, 0, 0)
        self._started = time.perf_counter()
        self.interrupted = False

    def header(self, state: str, seconds: float) -> str:
        """The header's line: the state, the time, and how far the plan is when one is worked."""
        line = f"{state} ({seconds:.1f} s)"
        if self.plan_progress is not None:
            done, total = self.plan_progress
            line += f" · {done} of {total} steps done"
        return line

    def bar(self, finished: bool) -> tuple[int, int] | None:
        """The header's bar as (value, max): the plan's steps done of all; else the place in
        the drained queue (full once the turns finished without an interrupt)."""
        if self.plan_progress is not None:
            return self.plan_progress
        if self.progress is None:
            return None
        step, total = self.progress
        return (total if finished and not self.interrupted else step - 1), total

    def _on_turn_started(self, event: core.TurnStarted) -> None:
        if event.position:
            self._settle()
            self.progress = (event.position, event.total)
            self._show(NoticeView(f"▶ {turn_label(event)[:200]}", "info"))
            self._refresh_plans()

    def _on_reasoning(self, event: core.ReasoningDelta) -> None:
        """Reasoning fills its own collapsed element, live; it never joins the reply text."""
        self._thinking.append(event.text)
        now = time.perf_counter()
        if self._think_update is None:
            self._think_update = self._make_live(LiveThinking(""))
        elif now - self._last_update < self.settings.stream_interval:
            return
        self._last_update = now
        self._think_update(LiveThinking("".join(self._thinking)))

    def _on_text(self, event: core.TextDelta) -> None:
        if self._thinking:
            self._settle_thinking()  # the answer begins: the thinking is over
        self._text.append(event.text)
        now = time.perf_counter()
        # The first piece always opens the live area (so every reply leaves the same
        # outputs, however fast it streamed); later pieces update it at most every interval.
        if self._update is None or now - self._last_update >= self.settings.stream_interval:
            self._last_update = now
            self._live("".join(self._text))

    def _on_tool_called(self, event: core.ToolCalled) -> None:
        self._settle()
        self._calls[event.id] = event
        if self.settings.show_tools:
            self._live(f"*running {code_span(event.tool)} …*")

    def _on_tool_finished(self, event: core.ToolFinished) -> None:
        call = self._calls.pop(event.id, None)
        if self._update is not None:
            self._update(Live(""))
            self._update = None
        if self.settings.show_tools:
            self._show(
                ToolBlock(
                    event.tool,
                    call.args if call is not None else {},
                    event.result,
                    is_error=event.is_error,
                    seconds=event.seconds,
                    limit=self.settings.result_chars,
                )
            )
        for value in event.shown:  # what the call made for the user: under its line
            self._show(value)
        self._show_pending_plans()

    def _on_plan(self, event: core.PlanMade) -> None:
        record = event.record
        if event.warning:
            self._show(NoticeView(event.warning, "warning"))
        if not self.settings.show_plans:
            return
        if record.held:  # shown last, so the review's own turn follows everything above
            self._held.append(self._held_view(record))
            return
        # A plan just filed has every step open. The graph is refreshed with live statuses
        # at the turn's end; its text keeps the first ones (`%ollie plan` shows them now).
        fresh = (
            dict.fromkeys(record.ids, StepState.OPEN) if record.kind in ("tasks", "queue") else {}
        )
        view = PlanGraphView(record, fresh, rankdir=self.settings.rankdir, background=True)
        self._pending_plans.append(view.keep_text())

    def _held_view(self, record: Any) -> Any:
        """A plan held for review: its editor, or (where none can act) its text and commands."""
        from ollie_nb.notebook._plan_editor import review_commands

        if self._review is not None:
            return self._review(record)
        return TextBlock("\n".join([record.text, *review_commands(record.number)]))

    def _show_pending_plans(self) -> None:
        """Draw plans under the reasoning_plan call that made them."""
        for view in self._pending_plans:
            self.plans.append(view)
            self._plan_updates.append(self._make_live(view))
            self._undrawn.append(view)
        self._pending_plans = []

    def _show_drawn_plans(self, wait: bool = False) -> None:
        """Replace a plan shown as text while its graph was drawn, once it is (or `wait`)."""
        for view in list(self._undrawn):
            if wait:
                view.wait_drawn()
            if not view.drawing:
                self._undrawn.remove(view)
                self._plan_updates[self.plans.index(view)](view)

    def _refresh_plans(self) -> None:
        """Each shown plan with its states now: as the agent told them (its queue plans),
        else as read."""
        for view, update in zip(self.plans, self._plan_updates):
            statuses = self._told.get(view.record.number)
            if statuses is None and self._plan_statuses is not None:
                statuses = self._plan_statuses(view.record)
            if statuses is None or statuses == view.statuses:
                continue
            view.statuses = statuses
            update(view)
            if view.drawing and view not in self._undrawn:
                self._undrawn.append(view)

    def _on_retry(self, event: core.Retrying) -> None:
        until = time.perf_counter() + event.delay
        self._retry = (event.reason or "rate limited", event.attempt, until)
        self._retry_shown = -1
        self.tick()

    def tick(self) -> None:
        """Called by the pump between events: plans drawn meanwhile, a retry's countdown."""
        self._show_drawn_plans()
        if self._retry is None:
            return
        reason, attempt, until = self._retry
        left = max(0, round(until - time.perf_counter()))
        if left != self._retry_shown:
            self._retry_shown = left
            self._live(f"*{reason}: retry {attempt} in {left} s …*")
        if left == 0:
            self._retry = None

    def _show_held(self) -> None:
        """The editors of plans held in the cell's turns, under the replies (what they point to)."""
        for view in self._held:
            self._show(view)
        self._held = []

    def _on_turn_ended(self, event: core.TurnEnded) -> None:
        self._settle()
        if event.interrupted:
            self.interrupted = True
            self._show(NoticeView("interrupted; the session is still usable", "warning"))
        self.result_reply = event.reply
        self._refresh_plans()

    def finish(self) -> None:
        """After the last turn: settle, refresh plan statuses, show the usage footer, then the
        editors of plans held (last: a decision's turn shows under them)."""
        self._settle()
        self._refresh_plans()
        self._show_drawn_plans(wait=True)
        u = self._usage
        if self.settings.usage_footer and u is not None:
            self._show(Footer(self.footer_text(u, time.perf_counter() - self._started)))
        self._show_held()

    def footer_text(self, u: core.UsageReported, seconds: float) -> str:
        """This cell's figures, then the session's (which counts its sub-agents' requests)."""
        tokens_in, tokens_out, requests = self._turn_usage
        return (
            f"this turn: {tokens_in:,} tokens in · {tokens_out:,} out · "
            f"{_count(requests, 'request')} · {seconds:.1f} s — session: "
            f"{u.total_input:,} in · {u.total_output:,} out · {_count(u.requests, 'request')}"
        )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def code_span(text: str) -> str:
    """`text` as a Markdown code span that no backtick inside it can close (CommonMark 6.1)."""
    text = " ".join(text.split())
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def turn_label(event: core.TurnStarted) -> str:
    """What a turn works: its plan step (`Step 2 of 5 [task t-..]: title`), else its first line."""
    if event.step is not None:
        return event.step.label
    return next((line for line in event.prompt.splitlines() if line.strip()), "")
