"""Events the agent core emits while it works; frontends render them, scripts may log them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

EventKind = Literal[
    "turn_start",  # data: prompt, queued (bool), step/total when draining a queue
    "assistant",  # text: the next piece of the reply
    "call",  # data: id, tool, server, args (dict or raw text)
    "tool",  # text: result; data: id, tool, server, is_error, seconds
    "plan",  # data: record (PlanRecord)
    "usage",  # data: input_tokens, output_tokens (this response), totals
    "retry",  # text: reason; data: attempt, delay
    "info",  # text: a notice for the user
    "error",  # text: one readable line
    "turn_end",  # text: the reply; data: interrupted, stop_reason, steps
    "watch",  # text: one line; data: what (queued, done, failed, cancelled, finished, stopped)
]


@dataclass(frozen=True)
class Event:
    """One thing that happened in a turn."""

    kind: EventKind
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[Event], None]


@dataclass
class TurnResult:
    """How a prompt ended: the final reply, and whether it was interrupted, refused or queued."""

    reply: str = ""
    interrupted: bool = False
    blocked: str = ""
    queued: bool = False
    error: str = ""
    steps: int = 0
    step_limit: bool = False  # stopped at maxSteps; the next prompt or `%ollie run` continues
