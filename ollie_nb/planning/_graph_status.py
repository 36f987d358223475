"""Step statuses as plans draw them: the canonical words, their aliases and their styles."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar, Union

# Keys of a status mapping: a 0-based step index, or a step id (or the goal id).
StatusKey = int | str

_V = TypeVar("_V", covariant=True)
# A mapping keyed by step index, by step id, or by either (a Mapping's key type is invariant,
# so a dict[str, str] is not a Mapping[int | str, str]).
StepMap = Union[Mapping[int, _V], Mapping[str, _V], Mapping[StatusKey, _V]]  # noqa: UP007

STATUSES: tuple[str, ...] = (
    "todo",
    "in_progress",
    "done",
    "failed",
    "blocked",
    "cancelled",
    "deferred",
)
"""Every status a drawn step can have; the last two are inactive and drawn greyed."""

# Task servers and people spell statuses many ways; this maps them onto STATUSES.
_STATUS_ALIASES: dict[str, str] = {
    "": "todo",
    "todo": "todo",
    "to_do": "todo",
    "open": "todo",
    "new": "todo",
    "pending": "todo",
    "ready": "todo",
    "queued": "todo",
    "in_progress": "in_progress",
    "inprogress": "in_progress",
    "started": "in_progress",
    "doing": "in_progress",
    "running": "in_progress",
    "active": "in_progress",
    "wip": "in_progress",
    "done": "done",
    "closed": "done",
    "complete": "done",
    "completed": "done",
    "finished": "done",
    "resolved": "done",
    "failed": "failed",
    "fail": "failed",
    "failure": "failed",
    "error": "failed",
    "errored": "failed",
    "blocked": "blocked",
    "waiting": "blocked",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "abandoned": "cancelled",
    "wontfix": "cancelled",
    "deferred": "deferred",
    "postponed": "deferred",
    "on_hold": "deferred",
    "later": "deferred",
}


def normalise_status(raw: object) -> str:
    """Map a task server's status word (e.g. `open`, `closed`) onto STATUSES; unknown -> `todo`."""
    if raw is None:
        return "todo"
    key = re.sub(r"[\s-]+", "_", str(raw).strip().lower())
    return _STATUS_ALIASES.get(key, "todo")


@dataclass(frozen=True)
class StatusStyle:
    """How one status is drawn; also what a legend shows for it."""

    fill: str
    border: str
    font: str
    line: str
    label: str
    inactive: bool = False


# Okabe-Ito hues (safe for the common colour-vision deficiencies) as borders, with
# light tints as fills and near-black text, so nodes read the same on light and dark
# page backgrounds; line styles repeat the distinction without colour.
STATUS_STYLES: Mapping[str, StatusStyle] = {
    "todo": StatusStyle("#FFFFFF", "#0072B2", "#1A1A1A", "solid", "to do"),
    "in_progress": StatusStyle("#FBE3B0", "#E69F00", "#1A1A1A", "bold", "in progress"),
    "done": StatusStyle("#C5E8DB", "#009E73", "#1A1A1A", "solid", "done"),
    "failed": StatusStyle("#F6CCB8", "#D55E00", "#1A1A1A", "bold", "failed"),
    "blocked": StatusStyle("#EBD5E4", "#CC79A7", "#1A1A1A", "dashed", "blocked"),
    "cancelled": StatusStyle("#E3E3E3", "#9A9A9A", "#6B6B6B", "dotted", "cancelled", True),
    "deferred": StatusStyle("#E3E3E3", "#9A9A9A", "#6B6B6B", "dotted", "deferred", True),
}
