"""ReasoningServer: the built-in `reasoning_think` and `reasoning_plan` tools."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from ollie_nb.planning import (
    NO_BACKEND,
    AdaptedPlanBackend,
    PlanBackend,
    PlanBook,
    PlanRecord,
    PlanStep,
    PlanValidationError,
    Review,
    format_plan,
    held_message,
    parse_plan,
    status_failed,
    status_saved,
    status_wrong_ids,
)
from ollie_nb.tools._types import ToolInfo, ToolResult

log = logging.getLogger("ollie_nb.tools")

SERVER_NAME = "reasoning"
DEFAULT_PLAN_TIMEOUT = 120.0

THINK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "description": "Your reasoning, in your own words."}
    },
    "required": ["thought"],
}

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "description": "What the plan achieves, in one sentence."},
        "steps": {
            "type": "array",
            "minItems": 1,
            "description": "The work breakdown, in the order you intend to do it.",
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "Short imperative title."},
                    "body": {"type": "string", "description": "Detail: how, and when done."},
                    "after": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 0},
                        "description": "0-based indexes of earlier steps this step waits for.",
                    },
                },
                "required": ["title"],
            },
        },
    },
    "required": ["goal", "steps"],
}

TOOLS = (
    ToolInfo(
        SERVER_NAME,
        "reasoning_think",
        "Think out loud: record intermediate reasoning before acting. No side effects.",
        THINK_SCHEMA,
        read_only=True,  # answers "ok" and keeps nothing
    ),
    ToolInfo(
        SERVER_NAME,
        "reasoning_plan",
        "Break a goal into ordered steps with dependencies before acting. Returns the "
        "formatted plan; when a task backend is configured the steps are persisted and get ids.",
        PLAN_SCHEMA,
    ),
)

PlanListener = Callable[[PlanRecord], None]


class ReasoningServer:
    """Meta-cognitive tools; holds an optional PlanBackend (None: in-context plans only).

    The plans it makes go into `book`, their one owner: the agent's PlanBook, which
    outlives this server (an agent switch builds a new one), or a book of its own.
    """

    def __init__(
        self, *, plan_timeout: float = DEFAULT_PLAN_TIMEOUT, book: PlanBook | None = None
    ) -> None:
        self.plan_timeout = plan_timeout
        self.book = book if book is not None else PlanBook()
        self._backend: AdaptedPlanBackend | None = None
        self._listeners: list[PlanListener] = []
        self.unreachable_note = ""  # set when a configured server (maybe a task server) is down
        self.hold_plans: Callable[[], bool] = lambda: False  # the agent's review setting

    def __repr__(self) -> str:
        return f"ReasoningServer(plan_backend={self.plan_backend_label or None})"

    # PlanBackendSetter
    def set_plan_backend(self, backend: PlanBackend | Any | None) -> None:
        """Wire (or, with None, unwire) the backend that persists or queues plans."""
        if backend is None or isinstance(backend, AdaptedPlanBackend):
            self._backend = backend  # already adapted: keep its sync runner
        else:
            self._backend = AdaptedPlanBackend(backend)

    @property
    def plans(self) -> list[PlanRecord]:
        """The plans of the book this server writes to (the session's, oldest first)."""
        return self.book.records

    @property
    def plan_backend(self) -> AdaptedPlanBackend | None:
        return self._backend

    @property
    def plan_backend_label(self) -> str:
        return self._backend.label if self._backend else ""

    def add_plan_listener(self, listener: PlanListener) -> None:
        """Call `listener(record)` after every plan, on the event loop's thread."""
        self._listeners.append(listener)

    async def list_tools(self) -> list[ToolInfo]:
        return list(TOOLS)

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name == "reasoning_think":
            thought = args.get("thought")
            if not isinstance(thought, str) or not thought.strip():
                return ToolResult.error("'thought' is required: a non-empty string")
            return ToolResult("ok")
        if name == "reasoning_plan":
            try:
                goal, steps = parse_plan(args)
            except PlanValidationError as exc:
                return ToolResult.error(str(exc))
            record = await self._plan(goal, tuple(steps))
            return ToolResult(record.text)
        return ToolResult.error(
            f"unknown tool {name!r}; this server has reasoning_think, reasoning_plan"
        )

    async def aclose(self) -> None:
        self._listeners.clear()

    async def _plan(self, goal: str, steps: tuple[PlanStep, ...]) -> PlanRecord:
        number = self.book.next_number
        if self.hold_plans():
            status = held_message(number)
            record = PlanRecord(
                number=number,
                goal=goal,
                steps=steps,
                status=status,
                text=format_plan(goal, steps, None, status),
                created=time.time(),
                review=Review.HELD,
            )
            self.book.hold(record)
        else:
            record = await self.persist(goal, steps, number)
            self.book.add(record)
        for listener in list(self._listeners):
            try:
                listener(record)
            except Exception:
                log.exception("plan listener failed")
        return record

    async def persist(self, goal: str, steps: tuple[PlanStep, ...], number: int) -> PlanRecord:
        """Send a plan to the wired backend (none: context only) and return its record as plan
        `number`, warnings and all; the book is left to the caller."""
        backend = self._backend
        ids: tuple[str, ...] = ()
        goal_id = warning = ""
        if backend is None and self.unreachable_note:
            warning = status = f"warning: no plan backend: {self.unreachable_note}; " + (
                "this plan lives in context only."
            )
        elif backend is None:
            status = NO_BACKEND
        else:
            # planTimeout stops waiting for a backend; code that cannot be stopped from outside
            # (a notebook's sync fallback, on the kernel thread) is waited for, and told apart.
            timeout = self.plan_timeout if backend.stoppable else None
            started = time.perf_counter()
            try:
                result = await asyncio.wait_for(backend.create_plan(goal, steps), timeout)
            except asyncio.TimeoutError:
                warning = status_failed(backend.label, f"no answer within {self.plan_timeout:g} s")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("plan backend %s failed: %s", backend.label, exc)
                warning = status_failed(backend.label, _reason(exc))
            else:
                distinct = {i for i in result.ids if i}  # a repeated id names no step for sure
                if len(result.ids) != len(steps) or len(distinct) != len(steps):
                    warning = status_wrong_ids(backend.label, len(distinct), len(steps))
                else:
                    ids, goal_id = tuple(result.ids), result.goal_id
            status = warning or (result.message or status_saved(backend.label, len(steps), goal_id))
            late = time.perf_counter() - started
            if not backend.stoppable and late > self.plan_timeout:
                status += (
                    f" ({backend.label} took {late:.1f} s, past planTimeout {self.plan_timeout:g} s:"
                    " code running on the kernel thread cannot be stopped from outside;"
                    " Ctrl-C stops it)"
                )
        return PlanRecord(
            number=number,
            goal=goal,
            steps=steps,
            ids=ids,
            goal_id=goal_id,
            status=status,
            backend=backend.label if backend else "",
            warning=warning,
            text=format_plan(goal, steps, ids or None, status, goal_id),
            created=time.time(),
            kind=backend.plan_kind if backend and ids else "context",
        )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__  # the warning is one line
