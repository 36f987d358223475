"""Events the agent core emits while it works; frontends render them, scripts may log them.

One frozen dataclass per kind, joined in the `Event` union: a frontend dispatches on
the type (`match event: case ToolCalled(): ...`), never on a kind string or a text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, TypeAlias

from ollie_nb.core._budget import BudgetExceededError
from ollie_nb.errors import OllieError

# The model's stream pieces are passed on as they are: one class per concept, re-exported.
from ollie_nb.llm import ReasoningDelta as ReasoningDelta
from ollie_nb.llm import TextDelta as TextDelta
from ollie_nb.planning import PlanRecord, StepRef, StepState

NoticeLevel = Literal["info", "warning", "error"]
"""How a notice is shown: a muted line, a warning or an error."""


@dataclass(frozen=True)
class TurnStarted:
    """A turn began on a prompt; a queued one says where it stands in the drained queue."""

    prompt: str
    queued: bool = False
    position: int = 0  # 1-based place of a queued prompt while the queue is drained; 0 if not
    total: int = 0  # prompts worked in this drain, this one and those still queued
    step: StepRef | None = None  # the plan step the turn works, known from its queue item
    asker: str = ""  # who works the step for the kernel (a sub-agent, the watch); '' the agent


@dataclass(frozen=True)
class ToolCalled:
    """A tool call starts, with its arguments as decoded JSON (their raw text if not JSON).

    Sent once the call's approval is settled, as it runs (the calls of one response may run
    together); a call refused or denied is announced when it is answered.
    """

    id: str
    tool: str
    server: str
    args: Any


@dataclass(frozen=True)
class ToolFinished:
    """A tool call answered: its (redacted) result, whether it failed, how long it took."""

    id: str
    tool: str
    server: str
    result: str
    is_error: bool = False
    seconds: float = 0.0
    shown: tuple[Any, ...] = field(default=(), compare=False, repr=False)  # for the cell only


@dataclass(frozen=True)
class ToolRefused:
    """The trust gate denied a call (not in trustedTools, beyond its step, not approved):
    it did not run. Sent before its ToolFinished; `args` redacted, for a log's line."""

    id: str
    tool: str
    server: str
    args: Any


@dataclass(frozen=True)
class PlanMade:
    """`reasoning_plan` handled a plan; `warning` is the user's line when it lives in context only."""

    record: PlanRecord
    warning: str = ""


@dataclass(frozen=True)
class PlanDecided:
    """A held plan was approved, sent back or discarded (`record.review` says which), by code,
    a `%ollie plan` command or an editor; every editor of the plan follows it."""

    record: PlanRecord


@dataclass(frozen=True)
class UsageReported:
    """Tokens of the latest model response, and the session's totals so far."""

    input_tokens: int
    output_tokens: int
    total_input: int
    total_output: int
    requests: int


@dataclass(frozen=True)
class Retrying:
    """The model request failed in a way worth retrying; the next try is in `delay` seconds."""

    reason: str
    attempt: int = 1
    delay: float = 0.0


@dataclass(frozen=True)
class Notice:
    """One line for the user: a note, a warning or an error."""

    text: str
    level: NoticeLevel = "info"


@dataclass(frozen=True)
class TurnEnded:
    """A turn is over: its result (the reply, and whether it was interrupted, failed, blocked
    or cut short)."""

    result: TurnResult

    @property
    def reply(self) -> str:
        return self.result.reply

    @property
    def interrupted(self) -> bool:
        return self.result.interrupted

    @property
    def error(self) -> str:
        return self.result.error

    @property
    def blocked(self) -> str:
        return self.result.blocked

    @property
    def steps(self) -> int:
        return self.result.steps

    @property
    def step_limit(self) -> bool:
        return self.result.step_limit


class WatchWhat(str, Enum):
    """What a watch or parallel-run notice is about."""

    QUEUED = "queued"  # a ready or assigned step was queued for the agent
    CLAIMED = "claimed"  # a parallel run handed a step to a sub-agent
    SKIPPED = "skipped"  # another agent claimed the step first
    REOPENED = "open"  # a stopped child's step was handed back
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    FINISHED = "finished"  # every step of the plan is finished (or the run is over)
    STOPPED = "stopped"  # the watch or the run stopped
    NOTE = "note"  # said once at a run's start (e.g. that claims are not atomic)

    @classmethod
    def of_status(cls, status: str) -> WatchWhat:
        """A step's settled status as a notice kind; any word it does not know is a failure."""
        found = {m.value: m for m in (cls.DONE, cls.CANCELLED, cls.FAILED, cls.REOPENED)}
        return found.get(status, cls.FAILED)


@dataclass(frozen=True)
class WatchNotice:
    """One line of the watch or of a parallel run, with the plan and step it is about."""

    text: str
    what: WatchWhat
    record: PlanRecord | None = None
    step_id: str = ""
    child: str = ""  # the sub-agent working the step (parallel runs)
    statuses: Mapping[str, StepState] = field(default_factory=dict)  # each step's, when finished


@dataclass(frozen=True)
class PlanProgress:
    """How far a plan the agent works is: its steps done, of all (a header's bar), and each
    step's state (its graph): a queue plan's from the agent's own book, so no reader races it;
    a task-server plan the watch works as read from the server after each of its steps."""

    plan: int
    done: int
    total: int
    states: Mapping[str, StepState] = field(default_factory=dict)


Event: TypeAlias = (
    TurnStarted
    | TextDelta
    | ReasoningDelta
    | ToolCalled
    | ToolFinished
    | ToolRefused
    | PlanMade
    | PlanDecided
    | UsageReported
    | Retrying
    | Notice
    | TurnEnded
    | WatchNotice
    | PlanProgress
)
"""Anything the core emits."""

EventSink = Callable[[Event], None]


@dataclass
class TurnResult:
    """How a prompt ended: the final reply, and whether it was interrupted, refused or queued.

    A failed turn keeps its error both as the line shown (`error`, redacted) and as the
    typed error (`failure`), so a caller branches on the type, never on the text.
    """

    reply: str = ""
    interrupted: bool = False
    blocked: str = ""
    queued: bool = False
    error: str = ""
    steps: int = 0
    step_limit: bool = False  # stopped at maxSteps; the next prompt or `%ollie run` continues
    error_handled: bool = False  # a turnError hook said it dealt with the error (all exited 0)
    failure: OllieError | None = None  # the error that ended the turn, as raised

    @property
    def capped(self) -> bool:
        """A spend cap stopped it before a model request (the error says which)."""
        return isinstance(self.failure, BudgetExceededError)
