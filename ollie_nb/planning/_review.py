"""What the model is told of a plan's review: held, approved, sent back, discarded, edited.

The texts are written here and nowhere else. `read_review` reads a review prompt's first
line back, only where the text comes from outside the code that queued it (a model
reading its messages, as the offline model does), as `read_step` does for step prompts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ollie_nb.planning._text import format_plan
from ollie_nb.planning._types import PlanRecord, Review
from ollie_nb.planning.prompts import HELD_MESSAGE, QUEUED_MESSAGE

_HEAD = re.compile(r"Plan (\d+) was (approved|sent back|discarded) by the user\b")
_REASON = re.compile(r"^The user's reason: (.*)$", re.MULTILINE)
_WORDS = {"approved": Review.APPROVED, "sent back": Review.REJECTED, "discarded": Review.DISCARDED}


def _template(text: str) -> re.Pattern[str]:
    """A fixed text written here with `{n}` in it, as a pattern that reads the number back."""
    return re.compile(re.escape(text).replace(re.escape("{n}"), r"(\d+)"))


_HELD = _template(HELD_MESSAGE)
_QUEUED = _template(QUEUED_MESSAGE)


def held_message(number: int) -> str:
    """The one status line the model gets for a plan held for review."""
    return HELD_MESSAGE.format(n=number)


def read_held(text: str) -> int | None:
    """The plan number a held plan's status line names (None for any other text); for a
    model that reads its tool results, as the offline model does."""
    match = _HELD.fullmatch(text.strip())
    return int(match.group(1)) if match else None


def read_queued(text: str) -> int | None:
    """The step count a queued plan's status line names (None for any other text)."""
    match = _QUEUED.fullmatch(text.strip())
    return int(match.group(1)) if match else None


def approval_prompt(record: PlanRecord, edits: Sequence[str]) -> str:
    """The prompt queued when the user approves plan `record` (as saved, with its new ids)."""
    lines = [f"Plan {record.number} was approved by the user."]
    if edits:
        lines.append("The user's edits:")
        lines.extend(f"- {edit}" for edit in edits)
    else:
        lines.append("The user approved it as you made it.")
    lines += ["", record.text]
    return "\n".join(lines)


def rejection_prompt(number: int, reason: str, reviewed: str = "") -> str:
    """The prompt queued when the user sends plan `number` back with `reason` (and, in
    `reviewed`, the edits the user made before)."""
    lines = [
        f"Plan {number} was sent back by the user for changes; nothing of it was saved.",
        f"The user's reason: {' '.join(reason.split())}",
        "Revise the plan and call reasoning_plan again with the whole revised plan; "
        "it is held for the user's review again.",
    ]
    if reviewed:
        lines += ["", reviewed]
    return "\n".join(lines)


def discard_note(number: int) -> str:
    """The note the model reads at its next turn when the user discards plan `number`."""
    return (
        f"Plan {number} was discarded by the user: nothing of it was saved; do not work its steps."
    )


def edited_note(record: PlanRecord, changes: Sequence[str]) -> str:
    """The note the model reads after the user edited saved plan `record`."""
    lines = [f"The user edited saved plan {record.number}:"]
    lines.extend(f"- {change}" for change in changes)
    lines += [
        "Its steps now:",
        format_plan(record.goal, record.steps, record.ids, "", record.goal_id),
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class ReviewNote:
    """What a review prompt's first lines say, read back from text a model was given."""

    plan: int
    review: Review
    reason: str = ""


def read_review(prompt: str) -> ReviewNote | None:
    """The review a prompt written here tells of (its first line), or None for other text."""
    match = _HEAD.match(prompt)
    if match is None:
        return None
    reason = _REASON.search(prompt)
    return ReviewNote(
        int(match.group(1)), _WORDS[match.group(2)], reason.group(1) if reason else ""
    )
