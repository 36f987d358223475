"""PlanGraphView: a plan as an inline SVG graph with live step statuses, or as text without dot."""

from __future__ import annotations

from collections.abc import Mapping

from ollie_nb.notebook._display import Displayable, esc
from ollie_nb.planning import GraphvizUnavailable, PlanRecord, plan_svg

_PROGRESS = {"done", "cancelled"}


class PlanGraphView(Displayable):
    """The plan graph (HTML) with the plan text as text/plain; never raises when drawn."""

    def __init__(
        self,
        record: PlanRecord,
        statuses: Mapping[str, str] | None = None,
        *,
        rankdir: str = "LR",
        groups: Mapping[str, str] | None = None,
    ) -> None:
        self.record = record
        self.statuses = dict(statuses or {})
        self.groups = dict(groups or {})  # step id -> who works it (a sub-agent), drawn as boxes
        self.rankdir = rankdir
        self.warning = ""

    def text(self) -> str:
        return self.record.text

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
            rankdir=self.rankdir,
        )

    def progress(self) -> tuple[int, int]:
        """(finished steps, all steps) from the known statuses."""
        done = sum(1 for s in self.statuses.values() if s in _PROGRESS)
        return done, len(self.record.steps)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        page = self.html()
        text = self.text() + (f"\n⚠ {self.warning}" if self.warning else "")
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
