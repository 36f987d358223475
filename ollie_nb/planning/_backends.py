"""The two shipped PlanBackends: a task MCP server, and the prompt queue fallback."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

from ollie_nb.planning._adapter import PlanBackendError
from ollie_nb.planning._client import Deleted, TaskCallError, TaskClient
from ollie_nb.planning._convention import APPROVED_LABEL, TASK_DELETE
from ollie_nb.planning._state import StepState, read_state
from ollie_nb.planning._steps import Origin, QueuedPrompt, StepRef, step_prompt
from ollie_nb.planning._types import PlanKind, PlanResult, PlanStep
from ollie_nb.planning.prompts import QUEUED_MESSAGE, TASKS_COMMITTED

log = logging.getLogger("ollie_nb.planning")

GOAL_TITLE_CHARS = 200


def dependency_layers(steps: Sequence[PlanStep]) -> list[list[int]]:
    """Group step indexes by depth: a layer's steps wait only for steps of earlier layers."""
    depth: list[int] = []
    for step in steps:
        depth.append(1 + max((depth[j] for j in step.after), default=-1))
    layers: list[list[int]] = [[] for _ in range(max(depth, default=-1) + 1)]
    for index, d in enumerate(depth):
        layers[d].append(index)
    return layers


class TaskServerPlanBackend:
    """Persists a plan as tasks on the MCP server that exposes `task_create`.

    One goal task, then one child task per step (`parent` = goal, `blockers` =
    its `after` steps' ids). The goal carries the label `approved` where the server
    takes labels: filed here, a plan was approved (or needed no review), and workers
    work such plans by default. Steps of one dependency layer are created
    concurrently; ids stay in step order. On any failure every task created so
    far is deleted again (when the server has `task_delete`) before raising.
    """

    plan_kind: PlanKind = "tasks"

    def __init__(
        self, client: TaskClient, *, can_delete: bool = True, concurrency: int = 16
    ) -> None:
        self.client = client
        self.server = client.server
        self.can_delete = can_delete
        self.label = f"task server '{self.server}'"
        self._limit = asyncio.Semaphore(concurrency)

    def __repr__(self) -> str:
        return f"TaskServerPlanBackend(server={self.server!r})"

    async def create_plan(self, goal: str, steps: Sequence[PlanStep]) -> PlanResult:
        """Create the goal and step tasks; roll back and raise PlanBackendError on failure."""
        created: list[str] = []
        try:
            goal_title, goal_body = _goal_task_text(goal, len(steps))
            mark = {"labels": [APPROVED_LABEL]} if self.client.caps.labels else {}
            goal_id = await self._create(title=goal_title, body=goal_body, **mark)
            created.append(goal_id)
            ids: list[str] = [""] * len(steps)
            for layer in dependency_layers(steps):
                if len(layer) == 1:  # awaited here: gather would start a task per step of a chain
                    ids[layer[0]] = await self._create_step(steps[layer[0]], goal_id, ids)
                    created.append(ids[layer[0]])
                    continue
                outcomes = await asyncio.gather(
                    *(self._create_step(steps[i], goal_id, ids) for i in layer),
                    return_exceptions=True,
                )
                failure: BaseException | None = None
                for index, outcome in zip(layer, outcomes):
                    if isinstance(outcome, BaseException):
                        failure = failure or outcome
                    else:
                        ids[index] = outcome
                        created.append(outcome)
                if failure is not None:
                    raise failure
        except BaseException as exc:
            note = await asyncio.shield(self._rollback(created))
            if isinstance(exc, asyncio.CancelledError):
                raise
            known = isinstance(exc, (PlanBackendError, TaskCallError))
            reason = str(exc) if known else repr(exc)
            raise PlanBackendError(reason + note) from None
        return PlanResult(
            ids=ids,
            goal_id=goal_id,
            message=TASKS_COMMITTED.format(
                label=self.label, goal_id=goal_id, n=len(steps), server=self.server
            ),
        )

    async def read_statuses(self, goal_id: str, ids: Sequence[str]) -> dict[str, StepState]:
        """Each step task's current state, read from the server's word (the StepStatusReader)."""
        words = await self.client.statuses(goal_id, ids)
        return {step_id: read_state(word) for step_id, word in words.items()}

    async def _create_step(self, step: PlanStep, goal_id: str, ids: list[str]) -> str:
        args: dict[str, Any] = {"title": step.title, "body": step.body, "parent": goal_id}
        if step.after:
            args["blockers"] = [ids[j] for j in step.after]
        return await self._create(**args)

    async def _create(self, **args: Any) -> str:
        async with self._limit:
            return await self.client.create(**args)

    async def _rollback(self, created: list[str]) -> str:
        """Delete the created steps (all at once), then the goal; return a note for the error."""
        if not created:
            return ""
        if not self.can_delete:
            return f"; {len(created)} tasks were left behind ({self.server} has no {TASK_DELETE})"
        goal, steps = created[0], created[1:]
        # All step deletes at once: on a hung server they time out together, in one call
        # timeout rather than one per task.
        outcomes = await asyncio.gather(*(self.client.delete(i) for i in reversed(steps)))
        left = [i for i, done in zip(reversed(steps), outcomes) if done is not Deleted.DELETED]
        # The goal goes last, with its subtree: a server that died mid-answer may have
        # committed a step whose id never came back. Servers without `recursive` ignore it
        # (or refuse it, and get a plain delete, unless the server stopped answering: then
        # one try, which a server that resumes still runs, after the requests before it).
        deleted = await self.client.delete(goal, recursive=True)
        hung = Deleted.TIMED_OUT in (deleted, *outcomes)
        if deleted is not Deleted.DELETED and (
            hung or await self.client.delete(goal) is not Deleted.DELETED
        ):
            left.append(goal)
        if left:
            log.warning("rollback left tasks on %s: %s", self.server, left)
            return f"; rollback could not delete {len(left)} tasks: {', '.join(left)}"
        return f"; rolled back {len(created)} created tasks"


def _goal_task_text(goal: str, count: int) -> tuple[str, str]:
    title = goal if len(goal) <= GOAL_TITLE_CHARS else goal[: GOAL_TITLE_CHARS - 1] + "…"
    body = f"Plan of {count} steps." + (f"\n\n{goal}" if title != goal else "")
    return title, body


class QueuePlanBackend:
    """Queues one item per step, blockers first, so the agent works the plan turn by turn.

    Steps may only wait for earlier steps, so step order is already a
    topological order; ids are `q1..qN` by step position. Each item's StepRef
    carries the number the plan gets (`plan_number()`, asked when the plan is made; the
    agent passes its PlanBook's next number, a backend made without one says 0).
    """

    label = "the prompt queue"
    plan_kind: PlanKind = "queue"

    def __init__(
        self, enqueue: Callable[[QueuedPrompt], Any], plan_number: Callable[[], int] = lambda: 0
    ) -> None:
        self.enqueue = enqueue
        self.plan_number = plan_number

    def __repr__(self) -> str:
        return "QueuePlanBackend()"

    async def create_plan(self, goal: str, steps: Sequence[PlanStep]) -> PlanResult:
        """Enqueue the step items and return q-ids with the stop-here message."""
        ids = [f"q{i + 1}" for i in range(len(steps))]
        for item in queue_items(goal, steps, ids, self.plan_number()):
            queued = self.enqueue(item)
            if inspect.isawaitable(queued):
                await queued
        return PlanResult(ids=ids, message=QUEUED_MESSAGE.format(n=len(steps)))


def queue_items(
    goal: str, steps: Sequence[PlanStep], ids: Sequence[str], plan: int
) -> list[QueuedPrompt]:
    """A queue plan's items: its step prompts (`queue_prompts`), each with its StepRef."""
    return [
        QueuedPrompt(
            text,
            Origin.PLAN,
            StepRef(plan, index, len(steps), ids[index], "queue", steps[index].title),
        )
        for index, text in enumerate(queue_prompts(goal, steps, ids))
    ]


def queue_prompts(goal: str, steps: Sequence[PlanStep], ids: Sequence[str]) -> list[str]:
    """The step prompts: goal prepended to the first, `(after: q1, q2)` on dependents."""
    return [
        step_prompt(steps, index, ids, kind="queue", goal=goal if index == 0 else "")
        for index in range(len(steps))
    ]
