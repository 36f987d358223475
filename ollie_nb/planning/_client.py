"""TaskClient: the one way the agent calls a task server, over a dispatch callable.

The plan backend, the status reader, the event watch, the parallel run and
`%ollie tasks` all call the task server through this class, which speaks the
convention's tools (`task_create`, `task_update`, `task_claim`, `task_heartbeat`, `task_read`,
`task_list`, `task_events`, `task_delete`, `task_edit`, `task_dep`) and returns parsed
values. Planning imports no tools: the dispatch callable is the env's `Dispatcher.dispatch`.
"""

from __future__ import annotations

import asyncio
import builtins
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from ollie_nb.errors import TaskServerError
from ollie_nb.planning._status import listing_next, listing_statuses, task_status


class ToolResultLike(Protocol):
    """What a tool call answers (ollie_nb.tools.ToolResult has this shape)."""

    @property
    def text(self) -> str: ...
    @property
    def is_error(self) -> bool: ...


Dispatch = Callable[[str, str, dict[str, Any]], Awaitable[ToolResultLike]]
"""Calls one tool of one server: (server, tool, arguments) -> result."""


MAX_LIST_PAGES = 1000  # pages of one status read's listing, against a server whose cursor loops


def _json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


class TaskCallError(TaskServerError):
    """A task tool answered with an error; the message is its first line."""


def first_line(text: str, default: str = "no message") -> str:
    text = text.strip()
    return text.splitlines()[0] if text else default


class TaskClient:
    """Calls the tools of one task server (see the module docstring)."""

    def __init__(self, dispatch: Dispatch, server: str) -> None:
        self._dispatch = dispatch
        self.server = server
        self._no_json: set[str] = set()  # read tools that refused format="json"
        self._by_ids = True  # task_list takes ids= (one query for one task's status)

    def __repr__(self) -> str:
        return f"TaskClient(server={self.server!r})"

    async def call(self, tool: str, args: dict[str, Any]) -> ToolResultLike:
        """One tool call as it answered (errors are results, not raised)."""
        return await self._dispatch(self.server, tool, args)

    async def create(self, **fields: Any) -> str:
        """Create a task; its id (TaskCallError when refused or not one id)."""
        result = await self.call("task_create", fields)
        if result.is_error:
            raise TaskCallError(f"task_create failed: {first_line(result.text)}")
        task_id = result.text.strip()
        unknown = "; the server may hold a task whose id it did not return"
        if not task_id:
            raise TaskCallError("task_create returned an empty id" + unknown)
        if len(task_id.split()) != 1:
            raise TaskCallError(
                f"task_create returned {task_id!r}; expected exactly one id as plain text" + unknown
            )
        return task_id

    async def update(self, task_id: str, **fields: Any) -> str:
        """Update a task; '' when done, else the server's reason."""
        result = await self.call("task_update", {"id": task_id, **fields})
        return result.text.removeprefix("error: ") if result.is_error else ""

    async def claim(
        self, task_id: str, assignee: str, *, atomic: bool = True, lease: float | None = None
    ) -> str:
        """Take a task for `assignee`: '' when taken, else why not.

        `atomic` uses `task_claim` (the server refuses a task someone holds); without it
        the task is set in progress with `task_update`, which another agent may race.
        `lease` (seconds, 0 for none) is passed only when given: a server without
        leases is called as before.
        """
        if not atomic:
            return await self.update(task_id, status="in_progress", assignee=assignee)
        args: dict[str, Any] = {"id": task_id, "assignee": assignee}
        if lease is not None:
            args["lease"] = lease
        result = await self.call("task_claim", args)
        return result.text.removeprefix("error: ") if result.is_error else ""

    async def renew(self, task_id: str, assignee: str, lease: float, tool: str) -> str:
        """Renew `assignee`'s claim for `lease` s with `tool` (task_heartbeat, or task_claim
        again): '' when renewed, else why not (the claim is gone)."""
        result = await self.call(tool, {"id": task_id, "assignee": assignee, "lease": lease})
        return result.text.removeprefix("error: ") if result.is_error else ""

    async def delete(self, task_id: str, *, recursive: bool = False) -> tuple[bool, bool]:
        """(deleted, timed out) for one task_delete call."""
        args: dict[str, Any] = {"id": task_id, **({"recursive": True} if recursive else {})}
        result = await self.call("task_delete", args)
        return not result.is_error, result.is_error and "timed out" in result.text

    async def edit(self, task_id: str, **fields: str) -> None:
        """Revise a task's title or body with `task_edit` (TaskCallError when refused)."""
        result = await self.call("task_edit", {"id": task_id, **fields})
        if result.is_error:
            raise TaskCallError(f"task_edit {task_id} failed: {first_line(result.text)}")

    async def depend(self, task_id: str, blocker: str, *, remove: bool = False) -> None:
        """Make `blocker` block `task_id` (or, with `remove`, no longer) with `task_dep`."""
        args: dict[str, Any] = {"id": task_id, "blocker": blocker}
        if remove:
            args["remove"] = True
        result = await self.call("task_dep", args)
        if result.is_error:
            raise TaskCallError(f"task_dep {task_id} {blocker} failed: {first_line(result.text)}")

    async def read(self, task_id: str) -> str | None:
        """The status word of one task (None when it cannot be read)."""
        text = await self._read("task_read", {"id": task_id})
        return task_status(text) if text is not None else None

    async def status(self, task_id: str) -> str | None:
        """The status word of one task, by the lightest read the server offers: a
        `task_list` of just its id and status (one query on ollie-tasks), else `task_read`.

        A server whose task_list refuses `ids`, or ignores it (its answer holds other
        tasks), is asked with task_read from then on.
        """
        if self._by_ids:
            args = {"status": "all", "ids": [task_id], "fields": ["id", "status"]}
            result = await self.call("task_list", {**args, "format": "json"})
            data = None if result.is_error else _json_object(result.text)
            tasks = data.get("tasks") if isinstance(data, dict) else None
            if isinstance(tasks, list) and len(tasks) <= 1:  # none: no such task
                return listing_statuses(result.text, {task_id}).get(task_id)
            self._by_ids = False
        return await self.read(task_id)

    async def list(self, status: str = "all") -> ToolResultLike:
        """The server's own listing of its tasks with `status`, as it answered it."""
        return await self.call("task_list", {"status": status})

    async def statuses(self, goal_id: str, ids: Sequence[str]) -> dict[str, str]:
        """Each task's status word as the server reports it (unknown ids left out).

        One `task_list(status="all", parent=goal)` (and, when its JSON page says `next`,
        the following pages with only ids and statuses), then `task_read` for the ids it
        did not give, each asked for in JSON first.
        """
        wanted = set(ids)
        found: dict[str, str] = {}
        if goal_id:
            found.update(await self._listed_statuses(goal_id, wanted))
        missing = [i for i in ids if i not in found]
        if missing:
            reads = await asyncio.gather(*(self.read(i) for i in missing))
            found.update((i, status) for i, status in zip(missing, reads) if status)
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
            result = await self.call("task_list", {**lean, "format": "json", "cursor": cursor})
            listing = None if result.is_error else result.text
        return found

    async def events(self, since: int, limit: int) -> builtins.list[dict[str, Any]]:
        """One page of `task_events` after `since` (TaskCallError when unreadable)."""
        result = await self.call("task_events", {"since": since, "limit": limit})
        if result.is_error:
            raise TaskCallError(first_line(result.text, "task_events failed"))
        events = json.loads(result.text)
        if not isinstance(events, list):
            raise TaskCallError("task_events did not answer a JSON list")
        return [e for e in events if isinstance(e, dict) and isinstance(e.get("seq"), int)]

    async def _read(self, tool: str, args: dict[str, Any]) -> str | None:
        """A read tool's answer, asked for with `format="json"` first; None if it fails.

        A server that refuses the argument (its plain call works) is asked in text from
        then on; one that ignores it answers text, which the parsers read as before.
        """
        if tool not in self._no_json:
            result = await self.call(tool, {**args, "format": "json"})
            if not result.is_error:
                return result.text
        plain = await self.call(tool, args)
        if plain.is_error:
            return None
        self._no_json.add(tool)
        return plain.text
