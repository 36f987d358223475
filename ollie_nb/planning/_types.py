"""Plan value types and the PlanBackend protocol (the Python form of tools.PlanBackend)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal, Protocol, runtime_checkable

from ollie_nb.planning._state import StepState

PlanKind = Literal["tasks", "queue", "custom", "context"]
"""Where a plan's steps live: task-server tasks, queued prompts, a user's fallback, or context only."""


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan; `after` holds 0-based indexes of earlier steps it waits for."""

    title: str
    body: str = ""
    after: tuple[int, ...] = ()


@dataclass(frozen=True)
class PlanResult:
    """What a PlanBackend made of a plan: one id per step, and what the model should be told."""

    ids: list[str] = field(default_factory=list)
    message: str = ""
    goal_id: str = ""


PlanReturn = PlanResult | Sequence[str]


@runtime_checkable
class PlanBackend(Protocol):
    """Persists (or queues) a plan's steps; sync or async, returning ids or a PlanResult."""

    def create_plan(
        self, goal: str, steps: Sequence[PlanStep]
    ) -> PlanReturn | Awaitable[PlanReturn]: ...


@runtime_checkable
class KindedPlanBackend(Protocol):
    """A plan backend that says which kind of plans it makes (the shipped ones do)."""

    plan_kind: PlanKind


@runtime_checkable
class StepStatusReader(Protocol):
    """A plan backend that can say where each persisted step stands (a task server)."""

    async def read_statuses(self, goal_id: str, ids: Sequence[str]) -> dict[str, StepState]:
        """Each step id's current state, read from the store's word; unknown ids left out."""
        ...


@runtime_checkable
class PlanBackendSetter(Protocol):
    """Implemented by the reasoning server so the agent can wire a backend without importing it."""

    def set_plan_backend(self, backend: PlanBackend | None) -> None: ...


class Review(Enum):
    """Where a plan stands in the user's review (plans made with review off have none)."""

    HELD = "held"  # made, checked, kept back: nothing saved yet
    APPROVED = "approved"  # saved as the user edited it
    REJECTED = "rejected"  # sent back with the user's reason; the model revises it
    DISCARDED = "discarded"  # dropped: nothing saved


@dataclass(frozen=True)
class PlanRecord:
    """A plan as `reasoning_plan` handled it: what was asked, what the backend did, what the model saw."""

    number: int
    goal: str
    steps: tuple[PlanStep, ...]
    ids: tuple[str, ...] = ()
    goal_id: str = ""
    status: str = ""
    backend: str = ""
    warning: str = ""
    text: str = ""
    created: float = 0.0
    kind: PlanKind = "context"
    review: Review | None = None

    @property
    def held(self) -> bool:
        """True while the plan waits for the user's review (nothing of it is saved)."""
        return self.review is Review.HELD

    @property
    def persisted(self) -> bool:
        """True when a backend accepted the plan and gave one id per step."""
        return bool(self.backend) and not self.warning and len(self.ids) == len(self.steps)
