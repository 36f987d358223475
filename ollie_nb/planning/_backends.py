"""The two shipped PlanBackends: a task MCP server, and the prompt queue fallback."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ollie_nb.planning._adapter import PlanBackendError
from ollie_nb.planning._status import listing_next, listing_statuses, task_status
from ollie_nb.planning._steps import step_prompt
from ollie_nb.planning._types import PlanKind, PlanResult, PlanStep


class ToolResultLike(Protocol):
    """What a tool call answers (ollie_nb.tools.ToolResult has this shape)."""

    text: str
    is_error: bool


class Dispatcher(Protocol):
    """The one method a task-server plan backend needs of a dispatcher (planning imports no tools)."""

    async def dispatch(self, server: str, tool: str, args: dict[str, Any]) -> ToolResultLike: ...


log = logging.getLogger("ollie_nb.planning")

GOAL_TITLE_CHARS = 200
MAX_LIST_PAGES = 1000  # pages of one status read's listing, against a server whose cursor loops


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
    its `after` steps' ids). Steps of one dependency layer are created
    concurrently; ids stay in step order. On any failure every task created so
    far is deleted again (when the server has `task_delete`) before raising.
    """

    plan_kind: PlanKind = "tasks"

    def __init__(
        self,
        dispatcher: Dispatcher,
        server: str,
        *,
        can_delete: bool = True,
        concurrency: int = 16,
    ) -> None:
        self.dispatcher = dispatcher
        self.server = server
        self.can_delete = can_delete
        self.label = f"task server '{server}'"
        self._limit = asyncio.Semaphore(concurrency)
        self._no_json: set[str] = set()  # read tools that refused format="json"

    def __repr__(self) -> str:
        return f"TaskServerPlanBackend(server={self.server!r})"

    async def create_plan(self, goal: str, steps: Sequence[PlanStep]) -> PlanResult:
        """Create the goal and step tasks; roll back and raise PlanBackendError on failure."""
        created: list[str] = []
        try:
            goal_title, goal_body = _goal_task_text(goal, len(steps))
            goal_id = await self._create(title=goal_title, body=goal_body)
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
            reason = str(exc) if isinstance(exc, PlanBackendError) else repr(exc)
            raise PlanBackendError(reason + note) from None
        return PlanResult(
            ids=ids,
            goal_id=goal_id,
            message=TASKS_COMMITTED.format(
                label=self.label, goal_id=goal_id, n=len(steps), server=self.server
            ),
        )

    async def read_statuses(self, goal_id: str, ids: Sequence[str]) -> dict[str, str]:
        """Each step task's current status as the server reports it (unknown ids left out).

        The StepStatusReader of this backend: one `task_list(status="all", parent=goal)`
        (and, when its JSON page says `next`, the following pages with only ids and
        statuses), then `task_read` for the ids it did not give, each asked for in JSON first.
        """
        wanted = set(ids)
        found: dict[str, str] = {}
        if goal_id:
            found.update(await self._listed_statuses(goal_id, wanted))
        missing = [i for i in ids if i not in found]
        if missing:
            reads = await asyncio.gather(*(self._read("task_read", {"id": i}) for i in missing))
            for task_id, text in zip(missing, reads):
                status = task_status(text) if text is not None else None
                if status:
                    found[task_id] = status
        return found

    async def _listed_statuses(self, goal_id: str, wanted: set[str]) -> dict[str, str]:
        """The statuses a paged `task_list` of the goal's children gives, page after page."""
        args: dict[str, Any] = {"status": "all", "parent": goal_id}
        lean = {**args, "fields": ["id", "status"]}  # servers without `fields` ignore it
        listing = await self._read("task_list", lean)
        if listing is None:  # or refuse it
            listing = await self._read("task_list", args)
        found: dict[str, str] = {}
        for _ in range(MAX_LIST_PAGES):
            if listing is None:
                break
            found.update(listing_statuses(listing, wanted))
            cursor = listing_next(listing)
            if not cursor:
                break
            page_args = {**lean, "format": "json", "cursor": cursor}
            result = await self.dispatcher.dispatch(self.server, "task_list", page_args)
            listing = None if result.is_error else result.text
        return found

    async def _read(self, tool: str, args: dict[str, Any]) -> str | None:
        """A read tool's answer, asked for with `format="json"` first; None if it fails.

        A server that refuses the argument (its plain call works) is asked in text from
        then on; one that ignores it answers text, which the parsers read as before.
        """
        if tool not in self._no_json:
            result = await self.dispatcher.dispatch(self.server, tool, {**args, "format": "json"})
            if not result.is_error:
                return result.text
        plain = await self.dispatcher.dispatch(self.server, tool, args)
        if plain.is_error:
            return None
        self._no_json.add(tool)
        return plain.text

    async def _create_step(self, step: PlanStep, goal_id: str, ids: list[str]) -> str:
        args: dict[str, Any] = {"title": step.title, "body": step.body, "parent": goal_id}
        if step.after:
            args["blockers"] = [ids[j] for j in step.after]
        return await self._create(**args)

    async def _create(self, **args: Any) -> str:
        async with self._limit:
            result = await self.dispatcher.dispatch(self.server, "task_create", args)
        if result.is_error:
            raise PlanBackendError(f"task_create failed: {_first_line(result.text)}")
        task_id = result.text.strip()
        unknown = "; the server may hold a task whose id it did not return"
        if not task_id:
            raise PlanBackendError("task_create returned an empty id" + unknown)
        if len(task_id.split()) != 1:
            raise PlanBackendError(
                f"task_create returned {task_id!r}; expected exactly one id as plain text" + unknown
            )
        return task_id

    async def _rollback(self, created: list[str]) -> str:
        """Delete the created steps (all at once), then the goal; return a note for the error."""
        if not created:
            return ""
        if not self.can_delete:
            return f"; {len(created)} tasks were left behind ({self.server} has no task_delete)"
        goal, steps = created[0], created[1:]
        # All step deletes at once: on a hung server they time out together, in one call
        # timeout rather than one per task.
        outcomes = await asyncio.gather(*(self._delete({"id": i}) for i in reversed(steps)))
        left = [i for i, (ok, _) in zip(reversed(steps), outcomes) if not ok]
        # The goal goes last, with its subtree: a server that died mid-answer may have
        # committed a step whose id never came back. Servers without `recursive` ignore it
        # (or refuse it, and get a plain delete, unless the server stopped answering: then
        # one try, which a server that resumes still runs, after the requests before it).
        ok, timed_out = await self._delete({"id": goal, "recursive": True})
        hung = timed_out or any(t for _, t in outcomes)
        if not ok and (hung or not (await self._delete({"id": goal}))[0]):
            left.append(goal)
        if left:
            log.warning("rollback left tasks on %s: %s", self.server, left)
            return f"; rollback could not delete {len(left)} tasks: {', '.join(left)}"
        return f"; rolled back {len(created)} created tasks"

    async def _delete(self, args: dict[str, Any]) -> tuple[bool, bool]:
        """(deleted, timed out) for one task_delete call."""
        result = await self.dispatcher.dispatch(self.server, "task_delete", args)
        return not result.is_error, result.is_error and "timed out" in result.text


TASKS_COMMITTED = (
    "Plan saved on {label}: goal {goal_id} with {n} step tasks (parent = goal, blockers = "
    "after). Tasks committed. Use task_list to see ready steps; when you finish a step, "
    "mark it done with task_update (its id, status done) before you start the next."
)


def _goal_task_text(goal: str, count: int) -> tuple[str, str]:
    title = goal if len(goal) <= GOAL_TITLE_CHARS else goal[: GOAL_TITLE_CHARS - 1] + "…"
    body = f"Plan of {count} steps." + (f"\n\n{goal}" if title != goal else "")
    return title, body


def _first_line(text: str) -> str:
    text = text.strip()
    return text.splitlines()[0] if text else "no message"


QUEUED_MESSAGE = (
    "Plan queued ({n} steps). Stop here — do not execute the steps now. The queue will "
    "re-enter you with each step in order, one prompt per step; work only the step each "
    "prompt gives you."
)


class QueuePlanBackend:
    """Queues one prompt per step, blockers first, so the agent works the plan turn by turn.

    Steps may only wait for earlier steps, so step order is already a
    topological order; ids are `q1..qN` by step position.
    """

    label = "the prompt queue"
    plan_kind: PlanKind = "queue"

    def __init__(self, enqueue: Callable[[str], Any]) -> None:
        self.enqueue = enqueue

    def __repr__(self) -> str:
        return "QueuePlanBackend()"

    async def create_plan(self, goal: str, steps: Sequence[PlanStep]) -> PlanResult:
        """Enqueue the step prompts and return q-ids with the stop-here message."""
        ids = [f"q{i + 1}" for i in range(len(steps))]
        for prompt in queue_prompts(goal, steps, ids):
            queued = self.enqueue(prompt)
            if inspect.isawaitable(queued):
                await queued
        return PlanResult(ids=ids, message=QUEUED_MESSAGE.format(n=len(steps)))


def queue_prompts(goal: str, steps: Sequence[PlanStep], ids: Sequence[str]) -> list[str]:
    """The step prompts: goal prepended to the first, `(after: q1, q2)` on dependents."""
    return [
        step_prompt(steps, index, ids, kind="queue", goal=goal if index == 0 else "")
        for index in range(len(steps))
    ]
