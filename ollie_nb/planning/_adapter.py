"""One adapter from any user-supplied plan backend to the internal async form."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ollie_nb.errors import OllieError
from ollie_nb.planning._types import KindedPlanBackend, PlanKind, PlanResult, PlanStep

SyncRunner = Callable[[Callable[[], Any]], Awaitable[Any]]


class PlanBackendError(OllieError):
    """A plan backend failed or answered something that is not a plan result."""


class AdaptedPlanBackend:
    """Wraps an object with `create_plan` (sync or async) or a bare `(goal, steps)` callable.

    Sync code runs through `run_sync` (default: a worker thread, so a slow
    backend never blocks the event loop; the notebook passes a runner that
    hops to the kernel's main thread, where user code always runs).
    """

    target: Any
    _run_sync: SyncRunner

    def __init__(self, target: Any, *, run_sync: SyncRunner | None = None) -> None:
        if isinstance(target, AdaptedPlanBackend):
            run_sync = run_sync or target._run_sync
            target = target.target
        if isinstance(target, type) and hasattr(target, "create_plan"):  # unbound: would fail
            raise TypeError(f"{target.__name__} is a class: give an instance, {target.__name__}()")
        fn = getattr(target, "create_plan", None)
        if fn is None and callable(target) and not isinstance(target, type):
            fn = target
        if fn is None or not callable(fn):
            raise TypeError(
                f"{_name(target)} is not a plan backend: give an object with a "
                "create_plan(goal, steps) method, or a function (goal, steps) -> ids"
            )
        self.target = target
        self._fn = fn
        # Sync code handed to a runner of the caller's (the notebook's kernel thread) runs
        # where nothing can stop it from outside: a timeout would only stop waiting for it.
        self.stoppable = run_sync is None or _is_async(fn)
        self._run_sync = run_sync or _in_thread
        self.label: str = getattr(target, "label", None) or _name(target)
        self.plan_kind: PlanKind = (
            target.plan_kind if isinstance(target, KindedPlanBackend) else "custom"
        )

    def __repr__(self) -> str:
        return f"AdaptedPlanBackend({self.label})"

    async def create_plan(self, goal: str, steps: Sequence[PlanStep]) -> PlanResult:
        """Call the backend and normalise its answer into a PlanResult."""
        steps = list(steps)
        if inspect.iscoroutinefunction(self._fn) or inspect.iscoroutinefunction(
            getattr(self._fn, "__call__", None)  # noqa: B004 - async callable objects
        ):
            answer = await self._fn(goal, steps)
        else:
            answer = await self._run_sync(lambda: self._fn(goal, steps))
            if inspect.isawaitable(answer):
                answer = await answer
        return _normalise(answer, self.label)


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
    )


async def _in_thread(fn: Callable[[], Any]) -> Any:
    return await asyncio.to_thread(fn)


def _normalise(answer: Any, label: str) -> PlanResult:
    if isinstance(answer, PlanResult):
        return PlanResult(
            ids=["" if i is None else str(i) for i in answer.ids],
            message=answer.message,
            goal_id=answer.goal_id,
        )
    if isinstance(answer, (list, tuple)):
        return PlanResult(ids=["" if i is None else str(i) for i in answer])
    if answer is None:
        return PlanResult(ids=[])
    raise PlanBackendError(
        f"{label} returned {type(answer).__name__}; expected a list of ids or a PlanResult"
    )


def _name(target: Any) -> str:
    if inspect.ismethod(target):
        return f"{target.__qualname__}()"
    if inspect.isfunction(target):
        return f"{target.__name__}()"
    return type(target).__name__ if not isinstance(target, type) else target.__name__
