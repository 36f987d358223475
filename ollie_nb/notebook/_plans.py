"""PlanGraphView: a plan as an inline SVG graph with live step statuses, or as text without dot."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ollie_nb.notebook._display import Displayable, esc
from ollie_nb.planning import (
    DOT_TIMEOUT,
    GraphvizUnavailable,
    PlanDraft,
    PlanRecord,
    PlanView,
    Spend,
    StepState,
    format_plan,
    plan_svg,
    plan_view,
    status_word,
)

# dot runs here during a turn, never on the kernel thread: the cell shows the plan as text
# until the graph is drawn (one drawing at a time; dot itself is killed at DOT_TIMEOUT).
_DRAWER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ollie-dot")


def fit_to_cell(svg: str) -> str:
    """The SVG scaled down to the cell's width, its shape kept (dot writes a fixed size in pt).

    JupyterLab scales an HTML output's images to the cell, not the SVG in a widget (the
    live graph of `%ollie plan --watch`); the style on the element does it for both.
    """
    return svg.replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)


class PlanGraphView(Displayable):
    """The plan graph (HTML) with the plan text as text/plain; never raises when drawn."""

    def __init__(
        self,
        record: PlanRecord,
        statuses: Mapping[str, StepState] | None = None,
        *,
        rankdir: str = "LR",
        background: bool = False,
        groups: Mapping[str, str] | None = None,
        spend: Mapping[str, Spend] | None = None,
        expand: bool = False,
    ) -> None:
        self.record = record
        self.expand = expand  # every step drawn, also past the size a graph is collapsed at
        self.spend = dict(spend or {})  # step id -> its tokens and cost, shown on its node
        self.statuses = dict(statuses or {})
        self.groups = dict(groups or {})  # step id -> who works it (a sub-agent), drawn as boxes
        self.rankdir = rankdir
        self.warning = ""
        self.background = background  # draw off the kernel thread (a turn's live views)
        self._drawn: dict[Any, str | GraphvizUnavailable] = {}
        self._drawing: tuple[Any, concurrent.futures.Future[str]] | None = None
        self.kept_text = ""  # when set, the text/plain form stays this while the HTML updates

    def text(self) -> str:
        """The plan text, then each step's status and the progress when statuses are known."""
        view = self.view()
        if view is None:
            return self.record.text
        done, total = self.progress()
        words = [status_word(s) for s in view.statuses]
        width = max(len(w) for w in words)
        lines = [
            f"{i + 1}. {word:<{width}}  {step.title}"
            for i, (step, word) in enumerate(zip(view.steps, words, strict=True))
        ]
        return "\n".join([self.record.text, "", *lines, f"{done} of {total} steps done"])

    def view(self) -> PlanView | None:
        """Each step's effective status, or None when no status is known (or the plan is bad)."""
        if not self.statuses:
            return None
        r = self.record
        try:
            return plan_view(r.goal, r.steps, list(r.ids) or None, self.statuses, goal_id=r.goal_id)
        except ValueError:
            return None

    def svg(self) -> str:
        """The inline SVG; raises GraphvizUnavailable when dot cannot run."""
        r = self.record
        return plan_svg(
            r.goal,
            r.steps,
            list(r.ids) or None,
            self.statuses or None,
            goal_id=r.goal_id,
            groups=self.groups or None,
            spend=self.spend or None,
            rankdir=self.rankdir,
            expand=self.expand,
        )

    def progress(self) -> tuple[int, int]:
        """(finished steps, all steps) from the known statuses of this plan's steps."""
        view = self.view()
        done = sum(1 for s in view.statuses if s.is_finished) if view else 0
        return done, len(self.record.steps)

    def keep_text(self) -> PlanGraphView:
        """Freeze the text/plain form as it is now (for a live output: nbval and terminals
        see only its first display, so its text must not change with later updates)."""
        self.kept_text = self.text()
        return self

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        page = self.html()
        text = (self.kept_text or self.text()) + (f"\n⚠ {self.warning}" if self.warning else "")
        return {"text/plain": text, "text/html": page}

    def _key(self) -> Any:
        return (
            tuple(sorted(self.statuses.items())),
            tuple(sorted(self.groups.items())),
            tuple(sorted(self.spend.items(), key=lambda item: item[0])),
            self.rankdir,
            self.expand,
        )

    def _drawing_done(self) -> str | GraphvizUnavailable | None:
        """The SVG for the present statuses (or why there is none); None while it is drawn."""
        key = self._key()
        if key in self._drawn:
            return self._drawn[key]
        if not self.background:
            try:
                self._drawn[key] = self.svg()
            except GraphvizUnavailable as exc:
                self._drawn[key] = exc
            return self._drawn[key]
        if self._drawing is None or self._drawing[0] != key:
            self._drawing = (key, _DRAWER.submit(self.svg))
        future = self._drawing[1]
        if not future.done():
            return None
        error = future.exception()
        self._drawn[key] = error if isinstance(error, GraphvizUnavailable) else future.result()
        return self._drawn[key]

    @property
    def drawing(self) -> bool:
        """True while the graph for the present statuses is being drawn in the background."""
        return self._drawing_done() is None

    def wait_drawn(self, timeout: float = DOT_TIMEOUT + 1) -> None:
        """Wait (on the caller's thread) for a background drawing, at most `timeout` seconds."""
        if self._drawing is not None:
            concurrent.futures.wait([self._drawing[1]], timeout)

    def html(self) -> str:
        self.warning = ""
        drawn = self._drawing_done()
        if drawn is None:
            return (
                '<div style="color: var(--jp-ui-font-color2, #666)">drawing the graph …</div>'
                f"<pre>{esc(self.record.text)}</pre>"
            )
        try:
            if isinstance(drawn, GraphvizUnavailable):
                raise drawn
            body = f'<div class="ollie-plan" style="overflow:auto">{fit_to_cell(drawn)}</div>'
        except GraphvizUnavailable as exc:
            self.warning = str(exc)
            return (
                f'<div style="color: var(--jp-warn-color1, #b26a00)">⚠ {esc(str(exc))}</div>'
                f"<pre>{esc(self.record.text)}</pre>"
            )
        done, total = self.progress()
        bar = ""
        if self.statuses:
            bar = (
                f'<div><progress value="{done}" max="{total}"></progress> '
                f"{done} of {total} steps done</div>"
            )
        return body + bar


class PlanShow(Displayable):
    """`%ollie plan show`: a plan as text and as a graph; a held plan as its draft stands."""

    def __init__(
        self,
        record: PlanRecord,
        draft: PlanDraft | None = None,
        statuses: Mapping[str, StepState] | None = None,
        *,
        rankdir: str = "LR",
    ) -> None:
        self.record = record
        self.draft = draft
        self.graph: PlanGraphView | None = None
        if draft is None:
            self.graph = PlanGraphView(record, statuses, rankdir=rankdir)
        elif draft.valid:
            steps = draft.steps()
            shown = replace(
                record, goal=draft.goal, steps=steps, text=format_plan(draft.goal, steps)
            )
            self.graph = PlanGraphView(shown, rankdir=rankdir)

    def title(self) -> str:
        state = "held for review" if self.record.held else self.record.backend or "in context"
        return f"plan {self.record.number} ({state})"

    def text(self) -> str:
        body = self.draft.text() if self.draft is not None else None
        if body is None:
            assert self.graph is not None
            body = self.graph.text()
        return f"{self.title()}\n{body}"

    def html(self) -> str:
        graph = self.graph.html() if self.graph is not None else ""
        return (
            f"<b>{esc(self.title())}</b><pre>{esc(self.text().partition(chr(10))[2])}</pre>{graph}"
        )
