"""A step's state: one enum, read from whatever word a task server (or a person) uses for it.

ollie-tasks says open / in_progress / done / failed / cancelled; other servers say
pending, "in progress", claimed, closed, resolved, ... Every part that decides on a
step's state (the fan-out, the watch, the graph, `%ollie plans`, the parallel run's
table) reads the word with `read_state` and asks the enum, never the word.
"""

from __future__ import annotations

import re
from enum import Enum


class StepState(str, Enum):
    """Where a step stands; UNKNOWN is a word no mapping knows (shown as that word).

    A str enum: its value is the word ollie-tasks uses, which is what it prints as.
    """

    OPEN = "open"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    BLOCKED = "blocked"
    DEFERRED = "deferred"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value

    @property
    def is_finished(self) -> bool:
        """Nothing more will happen to it: done, or cancelled (skipped)."""
        return self in (StepState.DONE, StepState.CANCELLED)

    @property
    def is_open(self) -> bool:
        """Ready to be taken once its blockers are done."""
        return self is StepState.OPEN

    @property
    def is_active(self) -> bool:
        """Someone works it now."""
        return self is StepState.IN_PROGRESS

    @property
    def is_failed(self) -> bool:
        return self is StepState.FAILED

    @property
    def unblocks(self) -> bool:
        """A step after one in this state may start: only done, never failed or skipped."""
        return self is StepState.DONE

    @property
    def is_closed(self) -> bool:
        """Finished or failed: the step's work is over, well or not."""
        return self.is_finished or self.is_failed


_WORDS: dict[StepState, tuple[str, ...]] = {
    StepState.OPEN: ("open", "pending", "todo", "to_do", "ready", "new", "queued", "backlog"),
    StepState.IN_PROGRESS: (
        "in_progress",
        "inprogress",
        "claimed",
        "doing",
        "started",
        "active",
        "running",
        "wip",
        "working",
    ),
    StepState.DONE: ("done", "closed", "completed", "complete", "resolved", "finished"),
    StepState.FAILED: ("failed", "fail", "failure", "error", "errored"),
    StepState.CANCELLED: (
        "cancelled",
        "canceled",
        "skipped",
        "abandoned",
        "wontfix",
        "dropped",
    ),
    StepState.BLOCKED: ("blocked", "waiting"),
    StepState.DEFERRED: ("deferred", "postponed", "on_hold", "later"),
}
_STATES: dict[str, StepState] = {w: state for state, words in _WORDS.items() for w in words}


def _key(word: str) -> str:
    return re.sub(r"[\s-]+", "_", word.strip().lower())


def read_state(word: object) -> StepState:
    """The state a server's status word means (case, spaces and dashes ignored)."""
    if isinstance(word, StepState):
        return word
    if word is None:
        return StepState.UNKNOWN
    return _STATES.get(_key(str(word)), StepState.UNKNOWN)


def state_label(word: object) -> str:
    """How a state is shown: its own word when known (`in_progress`), else the server's word."""
    state = read_state(word)
    if state is StepState.UNKNOWN:
        return str(word or "") if not isinstance(word, StepState) else ""
    return str(state)  # its value, as a str (`.value` of a narrowed member types as Any)
