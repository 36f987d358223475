"""PlanGraphView: a plan as an inline SVG graph with live step statuses, or as text without dot."""

from __future__ import annotations

from collections.abc import Mapping

from ollie_nb.notebook._display import Displayable, esc
from ollie_nb.planning import GraphvizUnavailable, PlanRecord, PlanView, plan_svg, plan_view

_PROGRESS = {"done", "cancelled"}


class PlanGraphView(Displayable):
    """The plan graph (HTML) with the plan text as text/plain; never raises when drawn."""

    def __init__(
        self, record: PlanRecord, statuses: Mapping[str, str] | None = None, *, rankdir: str = "LR"
    ) -> None:
        self.record = record
        self.statuses = dict(statuses or {})
        self.rankdir = rankdir
        self.warning = ""
        self.kept_text = ""  # when set, the text/plain form stays this while the HTML updates

    def text(self) -> str:
        """The plan text, then each step's status and the progress when statuses are known."""
        view = self.view()
        if view is None:
            return self.record.text
        done, total = self.progress()
        width = max(len(s) for s in view.statuses)
        lines = [
            f"{i + 1}. {status:<{width}}  {step.title}"
            for i, (step, status) in enumerate(zip(view.steps, view.statuses, strict=True))
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
            rankdir=self.rankdir,
        )

    def progress(self) -> tuple[int, int]:
        """(finished steps, all steps) from the known statuses of this plan's steps."""
        view = self.view()
        done = sum(1 for s in view.statuses if s in _PROGRESS) if view else 0
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

    def html(self) -> str:
        self.warning = ""
        try:
            body = f'<div class="ollie-plan" style="overflow:auto">{self.svg()}</div>'
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
