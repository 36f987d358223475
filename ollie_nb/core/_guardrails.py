"""The turn loop's guardrails, as ollie has them: small pure pieces the loop consults.

- FailedRounds (ollie's consecutive tool errors): rounds in which every call failed are
  counted; at `failedRoundsNudge` the model is told to change approach, at
  `failedRoundsLimit` the turn stops. Any call that succeeds starts the count again.
- ContextWarning (ollie's context warning): one line when the context reaches 60% of the
  model's window, before compaction at 75%; said again only after a compaction (or once
  the context is below the mark again: a manual compaction, a cleared history).
- duplicates (ollie's batch de-duplication): identical calls of one batch to a tool known
  not to change anything run once, and each call id gets that result.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ollie_nb.core._compact import COMPACT_AT
from ollie_nb.core._config import FAILED_ROUNDS_LIMIT, FAILED_ROUNDS_NUDGE

_T = TypeVar("_T")

WARN_AT = 0.6  # of the model's context window (ollie's autoWarnLimit)
NUDGE = (
    "[system: your last several tool calls all failed. Read their errors, then try a "
    "different approach, or ask the user for help. Keep your plan current: update it to "
    "reflect where you are and what remains.]"
)


class RoundVerdict(enum.Enum):
    """What the loop does after a tool round."""

    GO_ON = "go on"
    NUDGE = "nudge"  # the model is told its calls keep failing
    STOP = "stop"  # the turn ends


@dataclass
class FailedRounds:
    """Counts consecutive tool rounds in which every call failed; 0 turns a threshold off."""

    nudge_at: int = FAILED_ROUNDS_NUDGE  # ollie's consecutiveErrorSoftLimit
    stop_at: int = FAILED_ROUNDS_LIMIT  # ollie's consecutiveErrorHardLimit
    count: int = 0

    def record(self, failed: Sequence[bool]) -> RoundVerdict:
        """One round's calls (True: that call failed); a round with a success resets the count."""
        if failed and all(failed):
            self.count += 1
        else:
            self.count = 0
        if self.stop_at and self.count >= self.stop_at:
            return RoundVerdict.STOP
        if self.nudge_at and self.count == self.nudge_at:
            return RoundVerdict.NUDGE
        return RoundVerdict.GO_ON

    def stop_note(self) -> str:
        """The one line that says why the turn stopped."""
        return (
            f"stopped: every tool call failed in {self.count} rounds in a row "
            f"(failedRoundsLimit {self.stop_at}); send a prompt to go on"
        )


@dataclass
class ContextWarning:
    """A latch: warns once when the context reaches `ratio` of the window, re-armed only
    when the context is below that mark again (after a compaction)."""

    ratio: float = WARN_AT
    warned: bool = False

    def rearm(self) -> None:
        """The context shrank (a compaction): the next crossing of the mark is said again."""
        self.warned = False

    def check(self, size: int, window: int) -> str:
        """The warning line when it is due now, else ''."""
        if size < self.ratio * window:
            self.rearm()
            return ""
        if self.warned:
            return ""
        self.warned = True
        return (
            f"context at {size * 100 // window}% of the model's window ({size} of {window} "
            f"tokens); it is compacted at {COMPACT_AT:.0%}"
        )


def call_key(name: str, args: Any, read_only: bool) -> Hashable | None:
    """What makes two calls identical (tool and arguments); None for a tool that may change
    something: each of its calls runs."""
    if not read_only:
        return None
    return name, json.dumps(args, sort_keys=True, ensure_ascii=True)


def duplicates(items: Sequence[_T], key: Callable[[_T], Hashable | None]) -> dict[int, int]:
    """Index of each item identical to an earlier one -> the index of that first one."""
    first: dict[Hashable, int] = {}
    found: dict[int, int] = {}
    for n, item in enumerate(items):
        k = key(item)
        if k is None:
            continue
        if k in first:
            found[n] = first[k]
        else:
            first[k] = n
    return found


class FailingToolsError(Exception):
    """Why a turn stopped: every tool call failed in failedRoundsLimit rounds in a row."""
