"""The MCP face of the task store: the task_* tools, a `tasks://events` resource and its signal.

The layer is thin on purpose: every tool checks nothing itself, calls one `TaskStore`
method in a worker thread (SQLite may wait for another process's lock) and turns a
`TaskError` into a `ToolError`, whose text the model sees and can act on.
"""

# long module: one MCP surface, nine thin tools each with the description the model reads;
# the bounds, the prompts and the 2025 subscriptions live in modules of their own.

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.types import ToolAnnotations
from pydantic import Field

from ollie_nb.tasks import _render
from ollie_nb.tasks._errors import TaskError
from ollie_nb.tasks._http import request_user
from ollie_nb.tasks._inbox import DEFAULT_ASK_TIMEOUT, INBOX_FILTERS, KINDS, Inbox
from ollie_nb.tasks._legacy import Subscribers
from ollie_nb.tasks._pages import (
    NOTES_CHARS,
    NOTES_SHOWN,
    PAGE_CHARS,
    REFS_SHOWN,
    list_fields,
    list_start,
    newest_notes,
    task_json,
)
from ollie_nb.tasks._progress import MAX_TOOL_CHARS, progress_of
from ollie_nb.tasks._prompts import add_prompts
from ollie_nb.tasks._render import EXTRA_FIELDS, LIST_FIELDS
from ollie_nb.tasks._schema import STATUSES
from ollie_nb.tasks._store import (
    DEFAULT_LEASE,
    DETACH_PARENT,
    MAX_EVENTS_PAGE,
    Caller,
    Event,
    LeaseBounds,
    SqlTaskStore,
    Taken,
    Task,
    TaskRef,
)

EVENTS_URI = "tasks://events"
"""Resource whose update signal fires on every change; read the changes with task_events."""

LIST_LIMIT = 500
"""task_list shows at most this many lines, so one call cannot flood the model's context."""

RECENT_EVENTS = 100
"""How many of the newest events reading `tasks://events` returns (fewer when they are large)."""

_T = TypeVar("_T")

_INSTRUCTIONS = (
    "Persistent task store for plans. Task ids look like t-7kq2m. Statuses: "
    + ", ".join(STATUSES)
    + ". A task is ready when it is open and every blocker is done. Subscribe to "
    f"{EVENTS_URI} for a signal on each change and fetch what changed with task_events."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
_DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

TaskId = Annotated[str, Field(description="Task id, e.g. t-7kq2m")]
Lease = Annotated[
    float,
    Field(
        description=f"Seconds the claim holds unless renewed (default {DEFAULT_LEASE:g}; "
        "a lease above the server's cap is cut to it, and the answer says so; 0, a claim "
        "without end, only where the server accepts it)"
    ),
]
ClaimToken = Annotated[
    str,
    Field(
        description="The token task_claim answered: required to change a task claimed "
        "with task_claim; leave empty for a task nobody claimed that way"
    ),
]
Format = Annotated[
    Literal["text", "json"], Field(description="'text' to read (default) or 'json' to parse")
]


DEFAULT_LEASES = LeaseBounds()
"""Leases of at most an hour, never without end: a `serve` without lease options."""

WATCH_INTERVAL = 0.025
"""Seconds between two looks at SQLite's change counter (PostgreSQL is told by NOTIFY)."""


class _StoreCalls:
    """Store calls in worker threads (SQLite may wait for another process's lock), each
    change followed by the `tasks://events` signal; a TaskError becomes a ToolError."""

    def __init__(self, store: SqlTaskStore, bus: InMemorySubscriptionBus) -> None:
        self.store = store
        self.bus = bus
        self.subscribers = Subscribers(EVENTS_URI)  # 2025-protocol clients
        # As many worker threads as the store has connections: SQLite serialises on one
        # connection anyway, and a thread parked on that lock would only take a pool slot.
        self.limiter = anyio.CapacityLimiter(store.max_concurrency)
        self.seen = store.last_seq()

    async def run(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        try:
            return await anyio.to_thread.run_sync(
                functools.partial(fn, *args, **kwargs), limiter=self.limiter
            )
        except TaskError as exc:
            raise ToolError(str(exc)) from exc

    async def signal(self, seq: int) -> None:
        """Publish the update signal if the event log has moved past what was signalled."""
        if seq != self.seen:
            self.seen = seq
            await self.publish()

    async def publish(self) -> None:
        await self.bus.publish(ResourceUpdated(uri=EVENTS_URI))
        await self.subscribers.notify()

    async def change(self, work: Callable[[], _T]) -> _T:
        """Run a change (and any read of its result) in one worker call, then signal it."""

        def work_then_seq() -> tuple[_T, int]:
            return work(), self.store.last_seq()

        result, seq = await self.run(work_then_seq)
        await self.signal(seq)
        return result

    async def on_change(self) -> None:
        """Another process changed the database: signal it (a lock held long: next time).

        A store whose change reports mean new events (PostgreSQL's NOTIFY) is not asked
        for its last seq: with many servers on one database, every commit would cost
        each of them a query.
        """
        if self.store.changes_are_events:
            await self.publish()
            return
        with contextlib.suppress(ToolError):
            await self.signal(await self.run(self.store.last_seq))


def build_server(
    store: SqlTaskStore,
    *,
    watch_interval: float = WATCH_INTERVAL,
    leases: LeaseBounds = DEFAULT_LEASES,
) -> MCPServer:
    """Build the MCP server over `store`, granting claims the leases `leases` allows.

    Every change made through this server signals `tasks://events` at once. Changes
    made by other processes sharing the database are noticed by the store's own watch:
    SQLite's `PRAGMA data_version` every `watch_interval` seconds, PostgreSQL's
    LISTEN/NOTIFY (0 turns the watch off on both).
    """
    bus = InMemorySubscriptionBus()
    calls = _StoreCalls(store, bus)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            if watch_interval > 0:
                tg.start_soon(store.watch_changes, calls.on_change, watch_interval)
            try:
                yield {}
            finally:
                tg.cancel_scope.cancel()

    server = MCPServer(
        "ollie-tasks",
        version=_version(),
        instructions=_INSTRUCTIONS,
        subscriptions=bus,
        lifespan=lifespan,
        log_level="WARNING",
    )
    _add_create(server, store, calls)
    _add_list(server, store, calls)
    _add_read(server, store, calls)
    _add_whoami(server)
    _add_updates(server, store, calls, leases)
    _add_claim_next(server, store, calls, leases)
    _add_structure(server, store, calls)
    _add_events(server, store, calls)
    _add_inbox(server, Inbox(store), calls)
    calls.subscribers.serve(server)
    add_prompts(server)
    return server


def _version() -> str:
    """The installed package's version, for `serverInfo.version`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ollie-nb")
    except PackageNotFoundError:
        return "0+unknown"


def _add_create(server: MCPServer, store: SqlTaskStore, calls: _StoreCalls) -> None:
    """The tool task_create."""

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Create an open task and return its id (the only text of the result). "
            "Use parent to make it a step of a goal task, blockers for tasks that must be "
            "done before this one can start."
        ),
    )
    async def task_create(
        title: Annotated[str, Field(description="One line, at most 500 characters")],
        ctx: Context,
        body: Annotated[str, Field(description="Details, at most 64 KiB")] = "",
        parent: Annotated[str, Field(description="Id of the goal task this is a step of")] = "",
        blockers: Annotated[
            tuple[str, ...], Field(description="Ids of tasks that must be done first")
        ] = (),
        labels: Annotated[tuple[str, ...], Field(description="Short tags, no spaces")] = (),
    ) -> str:
        caller = _caller(ctx)
        return await calls.change(
            lambda: store.create(title, body, parent, blockers, labels, caller=caller)
        )


def _add_list(server: MCPServer, store: SqlTaskStore, calls: _StoreCalls) -> None:
    """The tool task_list."""

    @server.tool(
        structured_output=False,
        annotations=_READ_ONLY,
        description=(
            "List tasks, one per line: id, status, title, and what each waits on. "
            "status is one of " + ", ".join(STATUSES) + ", or 'ready' (open with every "
            "blocker done) or 'all'. format 'json' returns {tasks: [{id, title, status, "
            "assignee, parent, labels, blockers, created_at, updated_at}], total} instead "
            "(blockers: those not done yet), a page of about 50,000 characters: when more "
            "tasks follow it also has next, to pass as cursor. fields picks the keys of "
            "each task in JSON (e.g. ['id', 'status'] for many tasks in one page); 'body', "
            "'labels_by' (who set each label, for those an HTTP user set) and 'progress' "
            "(what a claim's holder last told by task_heartbeat: {tokens, cost, last_tool}, "
            "or null) are given only when fields names them."
        ),
    )
    async def task_list(
        status: Annotated[str, Field(description="A status, 'ready' or 'all'")] = "open",
        parent: Annotated[str, Field(description="Only the direct children of this task")] = "",
        label: Annotated[str, Field(description="Only tasks with this label")] = "",
        format: Format = "text",
        ids: Annotated[
            tuple[str, ...], Field(description="Only these tasks (at most 500 ids)")
        ] = (),
        fields: Annotated[
            tuple[str, ...],
            Field(
                description="JSON only: the keys of each task, of "
                + ", ".join((*LIST_FIELDS, *EXTRA_FIELDS))
            ),
        ] = (),
        cursor: Annotated[str, Field(description="JSON only: the next of the page before")] = "",
    ) -> str:
        chosen = list_fields(fields)
        start = list_start(cursor)
        edges = format == "text" or bool({"labels", "blockers"} & set(chosen))
        bodies = format == "json" and "body" in chosen
        setters = format == "json" and "labels_by" in chosen
        told = format == "json" and "progress" in chosen
        tasks = await calls.run(
            store.list,
            status,
            parent,
            label,
            ids,
            edges=edges,
            bodies=bodies,
            setters=setters,
            progress=told,
        )
        if format == "json":
            return _render.task_list_json(tasks, start=start, max_chars=PAGE_CHARS, fields=chosen)
        return _render.task_list(tasks, _selection(status, parent, label), LIST_LIMIT)


def _add_read(server: MCPServer, store: SqlTaskStore, calls: _StoreCalls) -> None:
    """The tool task_read."""

    @server.tool(
        structured_output=False,
        annotations=_READ_ONLY,
        description=(
            "Read one task: body, blockers, dependents, children and its newest notes "
            f"(at most {NOTES_SHOWN}, about {NOTES_CHARS:,} characters; the result says how "
            "many there are in all: pass notes_before to read earlier ones). format 'json' "
            "returns the task as one JSON object (notes_total, notes_start: the number of "
            "its first note). At most 100 blockers, dependents and children each are "
            "listed (JSON: blockers_total, dependents_total, children_total)."
        ),
    )
    async def task_read(
        id: TaskId,
        format: Format = "text",
        notes_before: Annotated[
            int, Field(description="Only notes numbered below this (1 = the oldest)", ge=0)
        ] = 0,
    ) -> str:
        task = newest_notes(
            await calls.run(store.get, id, notes=NOTES_SHOWN, notes_before=notes_before)
        )
        if format == "json":
            return task_json(task)
        return _render.task_detail(task, REFS_SHOWN)


def _add_whoami(server: MCPServer) -> None:
    """The tool task_whoami: whose this request's bearer token is."""

    @server.tool(
        structured_output=False,
        annotations=_READ_ONLY,
        description=(
            "Who this client is to the store, as JSON {user}: over HTTP the name of the "
            "user whose bearer token it sends (the assignee its claims get); '' over stdio "
            "or for the server's one unnamed token."
        ),
    )
    async def task_whoami(ctx: Context) -> str:
        return json.dumps({"user": _caller(ctx).user})


def _caller(ctx: Context, token: str = "") -> Caller:
    """The client of this request: the claim token it presents, its HTTP user if named."""
    return Caller(token=token.strip(), user=request_user(ctx.request_context.request))


def _lease_line(granted: float, asked: float) -> str:
    """The lease a claim got, and whether it was cut to the server's cap."""
    if not granted:
        return "lease: none (this server accepts claims without end)"
    cut = f" (cut from {asked:g} s: this server's cap)" if granted < asked else ""
    return f"lease: {granted:g} s{cut}"


def _claim_answer(claim: Taken, granted: float, asked: float) -> str:
    """task_claim's text: the claim line clients already read, its token, the lease granted."""
    lines = [f"claimed: {_render.claim_line(claim.task)}"]
    lines += [f"token: {claim.token}"] if claim.token else []
    return "\n".join([*lines, _lease_line(granted, asked)])


def _next_answer(claim: Taken | None, granted: float, asked: float) -> str:
    """task_claim_next's text: `none: ...`, or task_claim's answer with `id: ...` after
    its first line."""
    if claim is None:
        return "none: no step of these goals is ready and unclaimed"
    first, *rest = _claim_answer(claim, granted, asked).splitlines()
    return "\n".join([first, f"id: {claim.task.id}", *rest])


# long: three tool registrations, each its description, arguments and a few lines of work
def _add_updates(
    server: MCPServer, store: SqlTaskStore, calls: _StoreCalls, leases: LeaseBounds
) -> None:
    """The tools task_claim, task_heartbeat and task_update: who works on a task, where it stands."""

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Claim a ready task for an assignee: it becomes in_progress with that assignee, "
            "atomically, so of several agents claiming one task exactly one wins. Refused "
            "when the task is not open, waits on a blocker, or is claimed by someone else. "
            "The claim holds for `lease` seconds: renew it (task_heartbeat, or task_claim "
            "again) while working, else it goes back to open for anyone to claim. The "
            "answer's first line names the claim, then `token: ...` (pass it as token to "
            "renew, update, settle or release the task) and `lease: ...` (the lease granted)."
        ),
    )
    async def task_claim(
        id: TaskId,
        assignee: Annotated[
            str,
            Field(
                description="Who takes the task, e.g. an agent's name (on a server with named "
                "users: yours, or empty for it)"
            ),
        ],
        ctx: Context,
        lease: Lease = DEFAULT_LEASE,
        token: ClaimToken = "",
    ) -> str:
        caller = _caller(ctx, token)

        def claim() -> tuple[Taken, float]:
            granted = leases.grant(lease)
            return store.take(id, assignee, granted, caller=caller), granted

        made, granted = await calls.change(claim)
        return _claim_answer(made, granted, lease)

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Renew the lease of a claim the assignee holds: it ends `lease` seconds from "
            "now. Refused when the claim is gone (its lease ran out, or the task changed "
            "status): stop working on the task then. With `tokens` it also tells the step's "
            "progress so far (tokens, cost, last_tool), kept on the task until its next claim "
            "(task_list's `progress` field, task_read)."
        ),
    )
    async def task_heartbeat(
        id: TaskId,
        assignee: Annotated[str, Field(description="Who holds the claim")],
        ctx: Context,
        lease: Lease = DEFAULT_LEASE,
        token: ClaimToken = "",
        tokens: Annotated[
            int | None, Field(description="Tokens spent on the step so far (tells progress)")
        ] = None,
        cost: Annotated[float, Field(description="Dollars spent on the step so far")] = 0.0,
        last_tool: Annotated[
            str, Field(description=f"The last tool the step called (<= {MAX_TOOL_CHARS} chars)")
        ] = "",
    ) -> str:
        caller = _caller(ctx, token)

        def renew() -> tuple[Task, float]:
            granted = leases.grant(lease)
            told = None if tokens is None else progress_of(tokens, cost, last_tool)
            return store.heartbeat(id, assignee, granted, progress=told, caller=caller), granted

        task, granted = await calls.change(renew)
        return f"renewed: {_render.claim_line(task)}\n{_lease_line(granted, lease)}"

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Change a task's status and/or assignee, and/or append a note. Setting status "
            "done reports the tasks that became unblocked. A task claimed with task_claim "
            "changes only with that claim's token."
        ),
    )
    async def task_update(
        id: TaskId,
        ctx: Context,
        status: Annotated[str, Field(description="One of " + ", ".join(STATUSES))] = "",
        assignee: Annotated[str, Field(description="Who works on it")] = "",
        note: Annotated[str, Field(description="Text appended to the task's notes")] = "",
        token: ClaimToken = "",
    ) -> str:
        caller = _caller(ctx, token)

        def update_then_read() -> tuple[tuple[TaskRef, ...], TaskRef]:
            return store.update(id, status, assignee, note, caller=caller), store.ref(id)

        unblocked, task = await calls.change(update_then_read)
        return _render.update_answer(task, unblocked)


def _add_claim_next(
    server: MCPServer, store: SqlTaskStore, calls: _StoreCalls, leases: LeaseBounds
) -> None:
    """The tool task_claim_next: a worker's next step, picked and claimed in one call."""

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Claim the next ready, unclaimed step of the goals `parents` (or the first of "
            "`ids` that is ready, in their order) for an assignee, atomically: of several "
            "claimers each gets a different step, none is refused. The answer is task_claim's "
            "with `id: ...` after its first line, or `none: ...` when no step is ready."
        ),
    )
    async def task_claim_next(
        assignee: Annotated[str, Field(description="Who takes the step")],
        ctx: Context,
        parents: Annotated[
            tuple[str, ...], Field(description="Ids of the goals whose steps may be taken")
        ] = (),
        ids: Annotated[
            tuple[str, ...], Field(description="Only these steps, the first ready one first")
        ] = (),
        lease: Lease = DEFAULT_LEASE,
    ) -> str:
        caller = _caller(ctx)

        def claim() -> tuple[Taken | None, float]:
            granted = leases.grant(lease)
            return store.claim_next(parents, assignee, granted, ids=ids, caller=caller), granted

        made, granted = await calls.change(claim)
        return _next_answer(made, granted, lease)


# long: three tool registrations, each its description, arguments and a few lines of work
def _add_structure(server: MCPServer, store: SqlTaskStore, calls: _StoreCalls) -> None:
    """The tools task_edit, task_delete and task_dep: a task's text, the tree and its edges."""

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Revise a task's title, body or parent; empty arguments stay unchanged. "
            f"parent '{DETACH_PARENT}' makes it a top-level task."
        ),
    )
    async def task_edit(
        id: TaskId,
        ctx: Context,
        title: Annotated[str, Field(description="New one-line title")] = "",
        body: Annotated[str, Field(description="New body, replaces the old one")] = "",
        parent: Annotated[str, Field(description="New parent id, or '-' for none")] = "",
    ) -> str:
        caller = _caller(ctx)

        def edit_then_read() -> Task:
            store.edit(id, title, body, parent, caller=caller)
            return store.get(id)

        task = await calls.change(edit_then_read)
        return f"ok: {_render.ref_line(task.ref())}"

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Open a failed, cancelled or handed-back task again for anyone to claim: "
            "status open, assignee cleared, with an optional note. A task in progress "
            "or done is refused."
        ),
    )
    async def task_reopen(
        id: TaskId,
        ctx: Context,
        note: Annotated[str, Field(description="Text appended to the task's notes")] = "",
    ) -> str:
        caller = _caller(ctx)
        old = await calls.change(lambda: store.reopen(id, note, caller=caller))
        return f"ok: {id} reopened (was {old})"

    @server.tool(
        structured_output=False,
        annotations=_DESTRUCTIVE,
        description=(
            "Delete a task and its dependency edges. A task with children is refused "
            "unless recursive is true, which deletes the whole subtree."
        ),
    )
    async def task_delete(id: TaskId, ctx: Context, recursive: bool = False) -> str:
        caller = _caller(ctx)
        deleted = await calls.change(lambda: store.delete(id, recursive, caller=caller))
        return _render.deleted_answer(deleted)

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Make blocker block task id (id cannot be ready until blocker is done), or "
            "remove that edge with remove=true. Cycles are refused."
        ),
    )
    async def task_dep(
        id: TaskId,
        blocker: Annotated[str, Field(description="Id of the task that must be done first")],
        ctx: Context,
        remove: bool = False,
    ) -> str:
        caller = _caller(ctx)
        if remove:
            unblocked = await calls.change(lambda: store.remove_dep(id, blocker, caller=caller))
            return _render.dep_removed_answer(id, blocker, unblocked)
        added = await calls.change(lambda: store.add_dep(id, blocker, caller=caller))
        return _render.dep_answer(id, blocker, added)


def _add_events(server: MCPServer, store: SqlTaskStore, calls: _StoreCalls) -> None:
    """The tools task_events and the tasks://events resource."""

    @server.tool(
        structured_output=False,
        annotations=_READ_ONLY,
        description=(
            "Events after seq `since` as a JSON list of {seq, time, type, task, payload}; "
            "types: created, updated, status_changed, claimed, lease_expired, edited, "
            "deleted, dep_added, dep_removed, unblocked, inbox.asked, inbox.answered. A progress "
            "event tells a claim's progress (a task_heartbeat with tokens that changed it). "
            "Pass the last seq seen to get only what "
            "is new. A page holds at most `limit` events and about 50,000 characters (fewer "
            "events when they are large); format 'page' returns {events, next, more} instead: "
            "pass next as since to read on while more is true. tail true reads the newest "
            "`limit` events after since instead (the log's end: its page's next is the newest "
            "seq, and more is false), e.g. limit 1 for where the log stands now."
        ),
    )
    async def task_events(
        since: Annotated[int, Field(description="Return events with seq greater than this")] = 0,
        limit: Annotated[int, Field(description="At most this many events (max 1000)")] = 100,
        format: Annotated[
            Literal["list", "page"],
            Field(description="'list' (default): a JSON list; 'page': {events, next, more}"),
        ] = "list",
        tail: Annotated[
            bool, Field(description="The newest events, read from the log's end")
        ] = False,
    ) -> str:
        if tail:
            return _tail_answer(await calls.run(store.events, since, limit, newest=True), since)
        events = await calls.run(store.events, since, limit)
        texts = _render.events_within(events, PAGE_CHARS)
        if format == "list":
            return "[" + ", ".join(texts) + "]"
        next_seq = events[len(texts) - 1].seq if texts else since
        more = len(texts) < len(events) or (
            len(events) == min(limit, MAX_EVENTS_PAGE)
            and await calls.run(store.last_seq) > next_seq
        )
        return _render.events_page(texts, next_seq, more=more)

    @server.resource(
        EVENTS_URI,
        name="events",
        mime_type="application/json",
        description=(
            f"The newest {RECENT_EVENTS} task events as JSON. Subscribe for a signal on each "
            "change; the signal carries no data, fetch it with task_events(since=...)."
        ),
    )
    async def events_resource() -> str:
        recent = await calls.run(store.events, 0, RECENT_EVENTS, newest=True)
        return "[" + ", ".join(_newest_within(recent)) + "]"


# long: three tool registrations, each its description, arguments and a few lines of work
def _add_inbox(server: MCPServer, inbox: Inbox, calls: _StoreCalls) -> None:
    """The tools task_ask, task_inbox and task_answer: what waits on a person, and its answer."""

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Ask a person: open an inbox request (kind " + ", ".join(KINDS) + ") and return "
            "its id (the only text of the result). Anyone who can write to the store may "
            "answer it with task_answer; unanswered after `timeout` seconds it counts as "
            "denied. Wait for the answer with task_inbox(ids=[id]) or the events "
            "inbox.asked / inbox.answered. Mask secrets in `what` before asking."
        ),
    )
    async def task_ask(
        kind: Annotated[str, Field(description="One of " + ", ".join(KINDS))],
        what: Annotated[str, Field(description="What waits on an answer, at most 2000 chars")],
        asker: Annotated[str, Field(description="Who asks (on a server with named users: you)")],
        ctx: Context,
        goal: Annotated[str, Field(description="The plan's goal task id")] = "",
        step: Annotated[str, Field(description="The step's task id")] = "",
        timeout: Annotated[
            float, Field(description="Seconds before an unanswered request is denied")
        ] = DEFAULT_ASK_TIMEOUT,
    ) -> str:
        caller = _caller(ctx)
        return await calls.change(
            lambda: inbox.ask(
                kind, what, asker, goal=goal, step=step, timeout=timeout, caller=caller
            )
        )

    @server.tool(
        structured_output=False,
        annotations=_READ_ONLY,
        description=(
            "List inbox requests, oldest first, one per line: id, state, kind, who asks, "
            "what. state is one of " + ", ".join(INBOX_FILTERS) + " (expired: unanswered in "
            "time, taken as denied). format 'json' returns {requests: [{id, kind, goal, step, "
            "asker, what, created_at, deadline, answer, answered_by, answered_at, state}]}, "
            "and next (pass it as cursor) when more follow."
        ),
    )
    async def task_inbox(
        state: Annotated[
            str, Field(description="open (default), answered, expired or all")
        ] = "open",
        ids: Annotated[tuple[str, ...], Field(description="Only these requests")] = (),
        format: Format = "text",
        cursor: Annotated[str, Field(description="The next of the page before")] = "",
    ) -> str:
        start = list_start(cursor)
        rows, more = await calls.run(inbox.list, state, ids, start=start)
        next_start = start + len(rows) if more else None
        if format == "json":
            return _render.inbox_json(rows, next_start)
        return _render.inbox_text(rows, f"{state.strip().lower()} requests", next_start)

    @server.tool(
        structured_output=False,
        annotations=_WRITE,
        description=(
            "Answer an open inbox request once: allow, deny, stop or raise:<amount> (a cap). "
            "A second answer, or one after the request timed out, is refused. The answer "
            "records who gave it (on a server with named users: you)."
        ),
    )
    async def task_answer(
        id: Annotated[str, Field(description="The request's id, e.g. q-7kq2m0")],
        answer: Annotated[str, Field(description="allow, deny, stop or raise:<amount>")],
        ctx: Context,
        by: Annotated[str, Field(description="Who answers")] = "",
    ) -> str:
        caller = _caller(ctx)
        row = await calls.change(lambda: inbox.answer(id, answer, by, caller=caller))
        return f"answered: {_render.inbox_line(row)}"


def _newest_within(events: list[Event]) -> list[str]:
    """The newest of `events` (oldest first) that fit in a page, as JSON: cut from the old end."""
    return _render.events_within(events[::-1], PAGE_CHARS)[::-1]


def _tail_answer(events: list[Event], since: int) -> str:
    """A tail read's page: the newest events that fit, next the newest seq, never more."""
    texts = _newest_within(events)
    return _render.events_page(texts, events[-1].seq if events else since, more=False)


def _selection(status: str, parent: str, label: str) -> str:
    """Words naming what a task_list call selected, e.g. `ready tasks under t-7kq2m`."""
    status = status.strip().lower() or "open"
    words = "tasks" if status == "all" else f"{status} tasks"
    if parent.strip():
        words += f" under {parent.strip()}"
    if label.strip():
        words += f" labelled {label.strip()}"
    return words


def serve(
    store: SqlTaskStore,
    *,
    watch_interval: float = WATCH_INTERVAL,
    leases: LeaseBounds = DEFAULT_LEASES,
) -> None:
    """Serve `store` over stdio."""
    build_server(store, watch_interval=watch_interval, leases=leases).run()


def serve_http(
    store: SqlTaskStore,
    *,
    host: str,
    port: int,
    users: Mapping[str, str],
    watch_interval: float = WATCH_INTERVAL,
    leases: LeaseBounds = DEFAULT_LEASES,
) -> None:
    """Serve `store` over streamable HTTP on host:port; every request must carry a bearer
    token of `users` (token -> user name, '' for the single unnamed token)."""
    import uvicorn

    from ollie_nb.tasks._http import RequireBearer

    server = build_server(store, watch_interval=watch_interval, leases=leases)
    app = RequireBearer(server.streamable_http_app(host=host), users)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
