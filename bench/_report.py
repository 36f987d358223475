"""One measured figure, the table that shows them, and the JSON form of a run."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

LOWER_IS_BETTER = {"ms", "s", "B", "x"}
"""Units of costs; the other unit, "/s", is a rate, where higher is better."""


@dataclass
class Figure:
    """One line of the table: our median, the baseline's median, and the goal it is held to.

    `ratio` is always how many times the baseline's cost ours is (above 1: slower or
    bigger), so for a rate it is baseline / ours. Where ours and the baseline ran in
    pairs, side by side, `paired` holds the median of the pairs' ratios, which a busy
    machine disturbs less than a ratio of medians; `ratio` is then that.
    """

    what: str
    unit: str
    ours: float | None
    baseline: float | None = None
    baseline_what: str = ""
    goal: str = ""
    met: bool | None = None
    max_ratio: float | None = None
    samples: int = 0
    paired: float | None = None
    note: str = ""
    error: str = ""

    @property
    def ratio(self) -> float | None:
        """Ours over the baseline as a cost ratio; None when either is missing or zero."""
        if self.paired is not None:
            return self.paired
        if self.ours is None or self.baseline is None or self.ours == 0 or self.baseline == 0:
            return None
        if self.unit in LOWER_IS_BETTER:
            return self.ours / self.baseline
        return self.baseline / self.ours

    @property
    def goal_text(self) -> str:
        """The goal as the table shows it."""
        if self.goal or self.max_ratio is None:
            return self.goal
        return f"ratio <= {self.max_ratio:g}"

    @property
    def goal_met(self) -> bool | None:
        """Whether the goal is met: by `max_ratio` when there is a ratio, else `met`."""
        if self.max_ratio is None or self.ratio is None:
            return self.met
        return self.ratio <= self.max_ratio

    def to_dict(self, *, judge: bool = True) -> dict[str, Any]:
        """Plain JSON form, with the ratio and the verdict (None when not `judge`d)."""
        met = self.goal_met if judge else None
        return {**asdict(self), "ratio": self.ratio, "goal": self.goal_text, "met": met}


@dataclass(frozen=True)
class Numbered:
    """A figure with its row's number: the number comes from the row table, not the row."""

    row: int
    figure: Figure


def format_value(value: float | None, unit: str) -> str:
    """A value with its unit, with three significant digits or so."""
    if value is None:
        return "-"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "B":
        return f"{value:,.0f} B"
    if unit == "/s":
        return f"{value:,.0f}/s" if value >= 100 else f"{value:.1f}/s"
    if unit == "s" and value < 1:
        unit, value = "ms", value * 1000
    if unit == "ms" and value < 1:
        return f"{value * 1000:.0f} µs"
    digits = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{value:.{digits}f} {unit}"


def _ratio_text(figure: Figure) -> str:
    if figure.ratio is None:
        return "-"
    return f"{figure.ratio:.2f}" + ("*" if figure.paired is not None else "")


def _verdict(figure: Figure, judge: bool) -> str:
    if figure.error:
        return "FAILED"
    return {True: "yes", False: "NO", None: "-"}[figure.goal_met if judge else None]


def render_table(lines: Sequence[Numbered], *, judge: bool = True) -> str:
    """The table: one line per figure, then the baselines and notes keyed by row.

    Without `judge` (a smoke run's tiny sizes) no goal is marked met or missed.
    """
    head = ("row", "what", "ours", "baseline", "ratio", "goal", "met", "n")
    rows = []
    for n in lines:
        f = n.figure
        baseline = f.baseline_what if f.baseline is None and f.baseline_what else ""
        rows.append(
            (
                str(n.row),
                f.what,
                format_value(f.ours, f.unit),
                format_value(f.baseline, f.unit) if f.baseline is not None else baseline or "-",
                _ratio_text(f),
                f.goal_text or "-",
                _verdict(f, judge),
                str(f.samples) if f.samples else "-",
            )
        )
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    right = {2, 3, 4, 7}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    legend = [_legend(n) for n in lines]
    legend = [entry for entry in legend if entry]
    if legend:
        out += ["", *legend]
    return "\n".join(out)


def _legend(numbered: Numbered) -> str:
    """The line under the table for one figure: its failure, baseline and note; or ''."""
    f = numbered.figure
    parts = [f"failed: {f.error}"] if f.error else []
    if f.baseline_what and f.baseline is not None:
        parts.append(f"baseline: {f.baseline_what}")
    if f.note:
        parts.append(f.note)
    return f"  [{numbered.row}] {f.what}: " + "; ".join(parts) if parts else ""


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    versions = {}
    for dist in ("mcp", "ipython", "graphviz"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "usable_cpus": usable_cpus(),
        "packages": versions,
        "executable": sys.executable,
    }


def write_json(
    path: Path, lines: Sequence[Numbered], settings: dict[str, Any], *, judge: bool = True
) -> None:
    """Write the run's figures (each with its row), settings and machine as JSON."""
    figures = [{"row": n.row, **n.figure.to_dict(judge=judge)} for n in lines]
    data = {"machine": machine(), "settings": settings, "figures": figures}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
