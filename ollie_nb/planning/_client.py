"""TaskClient: the one way the agent calls a task server, over a dispatch callable.

The plan backend, the status reader, the event watch, the parallel run, the lease
holder, the headless worker and `%ollie tasks` all call the task server through this
class: it is the only code that names the convention's tools (planning/_convention.py)
or reads their answers. It learns the server's capabilities once, when it is wired
(`TaskCaps`), follows every listing's `next` cursor, and answers with types: a `Claim`,
a `StepState`, an `EventsPage`, a `Task`. Planning imports no tools: the dispatch
callable is the env's `Dispatcher.dispatch`.
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import contextlib
import enum
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from ollie_nb.errors import TaskServerError
from ollie_nb.planning._convention import (
    EVENTS_URI,
    TASK_ANSWER,
    TASK_ASK,
    TASK_CLAIM,
    TASK_CLAIM_NEXT,
    TASK_CREATE,
    TASK_DELETE,
    TASK_DEP,
    TASK_EDIT,
    TASK_EVENTS,
    TASK_HEARTBEAT,
    TASK_INBOX,
    TASK_LIST,
    TASK_READ,
    TASK_REOPEN,
    TASK_UPDATE,
    TASK_WHOAMI,
)
from ollie_nb.planning._inbox import ANSWER_POLL, InboxRequest, inbox_page
from ollie_nb.planning._progress import StepProgress
from ollie_nb.planning._state import StepState, read_state
from ollie_nb.planning._status import listing_next, listing_statuses, task_status


class ToolResultLike(Protocol):
    """What a tool call answers (ollie_nb.tools.ToolResult has this shape)."""

    @property
    def text(self) -> str: ...
    @property
    def is_error(self) -> bool: ...
    @property
    def timed_out(self) -> bool: ...


Dispatch = Callable[[str, str, dict[str, Any]], Awaitable[ToolResultLike]]
"""Calls one tool of one server: (server, tool, arguments) -> result."""

log = logging.getLogger("ollie_nb.planning")

Updates = Callable[[str], AbstractAsyncContextManager["AsyncIterator[Any] | None"]]
"""A server's change signals for a resource URI (None inside: it offers none)."""

SUBSCRIBE_TIMEOUT = 10.0
"""Seconds a wait gives the server to take its subscription before it polls instead."""

QUIET_LOOK = 5.0
"""Seconds a wait that follows signals goes without one before it looks anyway (a store
whose watch of other processes is off signals only its own clients' changes)."""


MAX_LIST_PAGES = 1000  # pages of one listing, against a server whose cursor loops
MAX_ENDED = 1000  # claims ended by their holder's own update, kept until their settle asks
HEARTBEATS_PER_LEASE = 3
LIST_FIELDS = (
    "id",
    "title",
    "status",
    "parent",
    "blockers",
    "body",
    "lease_until",
    "labels",
    "assignee",
)


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


def _takes(schemas: Mapping[str, Mapping[str, Any]], tool: str, arg: str) -> bool:
    """Whether `tool`'s input schema names the argument `arg`."""
    return arg in ((schemas.get(tool) or {}).get("properties") or {})


def _list_fields_offered(schemas: Mapping[str, Mapping[str, Any]]) -> str:
    """The text of task_list's `fields` argument: its description (names the fields)."""
    prop = ((schemas.get(TASK_LIST) or {}).get("properties") or {}).get("fields") or {}
    return json.dumps(prop) if isinstance(prop, Mapping) else ""


@dataclass(frozen=True)
class TaskCaps:
    """What a task server offers, read once from its tool list (the default: all of it)."""

    claims: bool = True  # task_claim: atomic claims
    leases: bool = True  # task_claim takes a lease
    heartbeat: bool = True  # task_heartbeat renews a lease (else a claim again does)
    events: bool = True  # task_events
    event_pages: bool = True  # task_events answers {events, next, more} pages
    list_pages: bool = True  # task_list pages its JSON with a `next` cursor
    list_fields: bool = True  # task_list picks the fields of its JSON (bodies in lists)
    delete: bool = True
    edit: bool = True
    dep: bool = True
    subscriptions: bool = False  # the server signals its changes (MCP resource updates)
    labels: bool = False  # task_create takes labels (a goal's approval mark): only when seen
    tokens: bool = True  # task_claim answers a claim token its holder presents (ollie-tasks)
    labels_by: bool = False  # task_list's JSON tells who set each label: only when seen
    claim_next: bool = False  # task_claim_next: the next ready step in one call, when seen
    event_tail: bool = False  # task_events reads from the log's end (tail): when seen
    inbox: bool = False  # task_ask, task_inbox, task_answer: ollie-tasks' inbox, when seen
    reopen: bool = False  # task_reopen: open a step again with its assignee cleared, when seen
    whoami: bool = False  # task_whoami: the HTTP user the client's token names, when seen
    progress: bool = False  # task_heartbeat takes a step's progress (tokens...): when seen

    @classmethod
    def of(cls, schemas: Mapping[str, Mapping[str, Any]], subscriptions: bool) -> TaskCaps:
        """The capabilities a server's tools show (`schemas`: tool name -> input schema)."""
        return cls(
            claims=TASK_CLAIM in schemas,
            leases=_takes(schemas, TASK_CLAIM, "lease"),
            heartbeat=TASK_HEARTBEAT in schemas,
            events=TASK_EVENTS in schemas,
            event_pages=_takes(schemas, TASK_EVENTS, "format"),
            list_pages=_takes(schemas, TASK_LIST, "cursor"),
            list_fields=_takes(schemas, TASK_LIST, "fields"),
            delete=TASK_DELETE in schemas,
            edit=TASK_EDIT in schemas,
            dep=TASK_DEP in schemas,
            subscriptions=subscriptions,
            labels=_takes(schemas, TASK_CREATE, "labels"),
            tokens=_takes(schemas, TASK_CLAIM, "token"),
            labels_by="labels_by" in _list_fields_offered(schemas),
            claim_next=TASK_CLAIM_NEXT in schemas and _takes(schemas, TASK_CLAIM_NEXT, "ids"),
            event_tail=_takes(schemas, TASK_EVENTS, "tail"),
            inbox={TASK_ASK, TASK_INBOX, TASK_ANSWER} <= set(schemas),
            reopen=TASK_REOPEN in schemas,
            whoami=TASK_WHOAMI in schemas,
            progress=_takes(schemas, TASK_HEARTBEAT, "tokens"),
        )

    @property
    def missing_for_edits(self) -> builtins.list[str]:
        """The tools an edit of a saved plan needs that the server lacks."""
        needed = ((TASK_EDIT, self.edit), (TASK_DEP, self.dep), (TASK_DELETE, self.delete))
        return [tool for tool, has in needed if not has]


@dataclass(frozen=True)
class LeasePolicy:
    """A claim's lease (`seconds`, 0 for none) and whether it is renewed while held."""

    seconds: float = 0.0
    renews: bool = False  # the server ends claims that are not renewed

    @property
    def active(self) -> bool:
        return self.seconds > 0 and self.renews

    @property
    def interval(self) -> float:
        return self.seconds / HEARTBEATS_PER_LEASE


NO_LEASE = LeasePolicy()
"""Claims as a server without leases takes them: nothing to renew."""


class ClaimOutcome(enum.Enum):
    """How a claim ended."""

    CLAIMED = "claimed"  # the step is the assignee's now
    REFUSED = "refused"  # the server refused: someone holds it, or it is not ready
    FAILED = "failed"  # the call got no answer (timed out, the server is gone)


@dataclass(frozen=True)
class Claim:
    """A claim's outcome: claimed (with the lease granted, its token, and whether atomic),
    or why not. The token is the holder's secret: never shown (not in its repr)."""

    outcome: ClaimOutcome
    reason: str = ""
    lease: float = 0.0  # seconds the server granted unless renewed (0: no expiry)
    atomic: bool = True  # task_claim took it (not a task_update another agent may race)
    token: str = field(default="", repr=False)  # '' from a server without tokens
    note: str = ""  # said once to the user (the server refused claimLease 0)

    @property
    def taken(self) -> bool:
        return self.outcome is ClaimOutcome.CLAIMED

    @property
    def renewal(self) -> LeasePolicy:
        """How the claim is kept: renewed at a third of the lease granted (none: no renewals)."""
        return LeasePolicy(self.lease, renews=self.lease > 0)


TOKEN_PREFIX = "token:"
LEASE_PREFIX = "lease:"
TOKEN_TOOLS = frozenset({TASK_CLAIM, TASK_HEARTBEAT, TASK_UPDATE})
"""The convention's tools that take a claim token on a server with tokens."""


def claim_answer(text: str, asked: float) -> tuple[str, float]:
    """The token and the lease granted that a task_claim or task_heartbeat answer gives
    (`token: ...`, `lease: 300 s` / `lease: none`); a server without them: '' and `asked`."""
    token, granted = "", asked
    for line in text.splitlines()[1:]:
        line = line.strip()
        if line.startswith(TOKEN_PREFIX):
            token = line.removeprefix(TOKEN_PREFIX).strip()
        elif line.startswith(LEASE_PREFIX):
            words = line.removeprefix(LEASE_PREFIX).split()
            if words and words[0] == "none":
                granted = 0.0
            elif words:
                with contextlib.suppress(ValueError):
                    granted = float(words[0])
    return token, granted


ID_PREFIX = "id:"


def next_claimed(text: str) -> str:
    """The id a task_claim_next answer names (`id: ...`); '' when it claimed none."""
    for line in text.splitlines()[1:]:
        if line.strip().startswith(ID_PREFIX):
            return line.strip().removeprefix(ID_PREFIX).strip()
    return ""


def _not_claimed(result: ToolResultLike, note: str) -> Claim:
    """A claim call's error answer: refused, or failed when it got no answer."""
    outcome = ClaimOutcome.FAILED if result.timed_out else ClaimOutcome.REFUSED
    return Claim(outcome, result.text.removeprefix("error: "), note=note)


def without_tokens(text: str) -> str:
    """A task tool's answer without its `token:` lines (what the model may read)."""
    lines = text.splitlines(keepends=True)
    return "".join(line for line in lines if not line.strip().startswith(TOKEN_PREFIX))


class HeldClaims:
    """The claims this agent made, by task id: filled when it claims, read by its own
    task-store calls and by the tool gateway, which attaches the token to the model's
    task_* calls of such a task. The tokens are never shown (its repr names ids only)."""

    def __init__(self) -> None:
        self._claims: dict[str, Claim] = {}
        self._ended: dict[str, StepState] = {}  # the state a holder's own update left

    def __repr__(self) -> str:
        return f"HeldClaims({sorted(self._claims)!r})"

    def hold(self, task_id: str, claim: Claim) -> None:
        self._claims[task_id] = claim
        self._ended.pop(task_id, None)

    def ended(self, task_id: str) -> StepState | None:
        """The state a held claim's own update set as it ended the claim (the server said
        ok), once; None when no such update was seen."""
        return self._ended.pop(task_id, None)

    def get(self, task_id: str) -> Claim | None:
        return self._claims.get(task_id)

    def drop(self, task_id: str) -> None:
        self._claims.pop(task_id, None)

    def with_token(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """`args` with the held claim's token for a token-taking call on a held task (a
        token given already stays)."""
        held = self._claims.get(str(args.get("id", ""))) if tool in TOKEN_TOOLS else None
        if held is None or not held.token or args.get("token"):
            return args
        return {**args, "token": held.token}

    def answered(self, tool: str, args: Mapping[str, Any], ok: bool, text: str) -> None:
        """Keep what a call did to a held claim: a claim made (its token), a claim that
        ended (the task left in_progress, went to another assignee, or a renewal refused)."""
        task_id = next_claimed(text) if tool == TASK_CLAIM_NEXT else str(args.get("id", ""))
        if tool in (TASK_CLAIM, TASK_CLAIM_NEXT) and ok and task_id:
            token, granted = claim_answer(text, float(args.get("lease", 0) or 0))
            if token:
                self.hold(task_id, Claim(ClaimOutcome.CLAIMED, lease=granted, token=token))
        elif (tool == TASK_HEARTBEAT and not ok) or (
            tool == TASK_UPDATE and ok and _ends_claim(args)
        ):
            if tool == TASK_UPDATE and args.get("status") and task_id in self._claims:
                self._end(task_id, read_state(str(args["status"])))
            self.drop(task_id)

    def _end(self, task_id: str, state: StepState) -> None:
        if len(self._ended) >= MAX_ENDED:  # ends nobody asked for (the watch's own steps)
            self._ended.pop(next(iter(self._ended)))
        self._ended[task_id] = state


def _ends_claim(args: Mapping[str, Any]) -> bool:
    """Whether a task_update with `args` ends its task's claim (the server voids the token)."""
    status = str(args.get("status") or "")
    return bool(status and status != StepState.IN_PROGRESS.value) or bool(args.get("assignee"))


@dataclass(frozen=True)
class NextClaim:
    """What a claim-next took: the step's id ('' for none) and the claim."""

    task_id: str
    claim: Claim


@dataclass(frozen=True)
class Released:
    """How a release ended: the task opened again, or the server's refusal (one line)."""

    opened: bool
    refused: str = ""


def _endless_refused(args: Mapping[str, Any], result: ToolResultLike) -> bool:
    """Whether a task_claim asked with lease 0 was refused for it (the server needs leases)."""
    if args.get("lease") != 0 or not result.is_error or result.timed_out:
        return False
    return "lease" in first_line(result.text).lower()


class Deleted(enum.Enum):
    """How one task_delete ended."""

    DELETED = "deleted"
    REFUSED = "refused"
    TIMED_OUT = "timed out"  # no answer: the server may still run it


@dataclass(frozen=True)
class EventsPage:
    """One page of the store's event log: its events, the seq to read after, and whether
    more follow (a server answering plain lists gives no `next`)."""

    events: builtins.list[dict[str, Any]]
    next: int | None
    more: bool


@dataclass(frozen=True)
class Task:
    """One task of a listing, with the fields a worker needs (body None: not listed)."""

    id: str
    title: str = ""
    state: StepState = StepState.UNKNOWN
    parent: str = ""
    blockers: tuple[str, ...] = ()
    body: str | None = None
    lease_until: str = ""
    labels: tuple[str, ...] = ()
    assignee: str = ""  # who holds it (over HTTP with named users: the user)
    labels_by: Mapping[str, str] = field(default_factory=dict, hash=False)  # label -> its setter
    progress: StepProgress | None = None  # what its holder's last heartbeat told, if any

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Task:
        """A task from a JSON listing's object."""
        body = data.get("body")
        return cls(
            str(data["id"]),
            str(data.get("title") or ""),
            read_state(str(data.get("status", ""))),
            str(data.get("parent") or ""),
            tuple(str(b) for b in data.get("blockers") or ()),
            None if body is None else str(body),
            str(data.get("lease_until") or ""),
            tuple(str(label) for label in data.get("labels") or ()),
            str(data.get("assignee") or ""),
            _setters(data.get("labels_by")),
            StepProgress.of(data.get("progress")),
        )

    @property
    def leased(self) -> bool:
        """Held with a lease that runs out unless renewed (a claim with an end)."""
        return self.state.is_active and bool(self.lease_until)

    @property
    def ready(self) -> bool:
        """Open with no blocker left: a claim may take it now."""
        return self.state.is_open and not self.blockers


def _setters(raw: Any) -> dict[str, str]:
    """A listing's `labels_by` (label -> setter), empty when absent or malformed."""
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v) for k, v in raw.items() if isinstance(v, str) and v}


def retry_steps(tasks: Sequence[Task], step_id: str) -> builtins.list[str]:
    """`step_id` then the steps that wait on it, transitively, that a retry reopens: all
    but those done or in progress (ValueError when the step is not listed or is one)."""
    by_id = {task.id: task for task in tasks}
    step = by_id.get(step_id)
    if step is None:
        raise ValueError(f"no step {step_id}")
    if step.state.unblocks or step.state.is_active:
        raise ValueError(f"step {step_id} is {step.state}: only a step not done is retried")
    order, seen = [step_id], {step_id}
    for current in order:
        for task in tasks:
            if task.id in seen or current not in task.blockers:
                continue
            if task.state.unblocks or task.state.is_active:
                continue
            seen.add(task.id)
            order.append(task.id)
    return order


class TaskClient:
    """Calls the tools of one task server (see the module docstring)."""

    def __init__(
        self,
        dispatch: Dispatch,
        server: str,
        caps: TaskCaps | None = None,
        updates: Updates | None = None,
    ) -> None:
        self._dispatch = dispatch
        self.updates = updates  # the server's change signals, followed while a wait lasts
        self.server = server
        self.caps = caps or TaskCaps()
        self._no_json: set[str] = set()  # read tools that refused format="json"
        self._by_ids = True  # task_list takes ids= (one query for one task's status)
        self._paged_events = self.caps.event_pages  # until the server refuses format="page"
        self.held = HeldClaims()  # the claims this agent made: their tokens and leases
        self._endless = True  # the server may take claimLease 0, until it refuses it

    def __repr__(self) -> str:
        return f"TaskClient(server={self.server!r})"

    async def _call(self, tool: str, args: dict[str, Any]) -> ToolResultLike:
        """One tool call as it answered (errors are results, not raised); a call on a task
        this agent holds presents the claim's token, and what it did to the claim is kept."""
        if self.caps.tokens:
            args = self.held.with_token(tool, args)
        result = await self._dispatch(self.server, tool, args)
        self.held.answered(tool, args, not result.is_error, result.text)
        return result

    async def create(self, **fields: Any) -> str:
        """Create a task; its id (TaskCallError when refused or not one id)."""
        result = await self._call(TASK_CREATE, fields)
        if result.is_error:
            raise TaskCallError(f"{TASK_CREATE} failed: {first_line(result.text)}")
        task_id = result.text.strip()
        unknown = "; the server may hold a task whose id it did not return"
        if not task_id:
            raise TaskCallError(f"{TASK_CREATE} returned an empty id" + unknown)
        if len(task_id.split()) != 1:
            raise TaskCallError(
                f"{TASK_CREATE} returned {task_id!r}; expected exactly one id as plain text"
                + unknown
            )
        return task_id

    async def update(self, task_id: str, **fields: Any) -> str:
        """Update a task; '' when done, else the server's reason."""
        result = await self._call(TASK_UPDATE, {"id": task_id, **fields})
        return result.text.removeprefix("error: ") if result.is_error else ""

    async def set_state(self, task_id: str, state: StepState, note: str) -> StepState:
        """Set a task's state with a note: the state it has then (refused, e.g. another
        holds the claim now: the state the server reports, as it stands)."""
        if await self.update(task_id, status=state.value, note=note[:500]):
            return await self.status(task_id)
        return state

    def lease(self, seconds: float) -> LeasePolicy:
        """The lease this server allows of `seconds` (0: claims without expiry)."""
        if not self.caps.claims or not self.caps.leases:
            return NO_LEASE
        return LeasePolicy(float(seconds), True) if seconds > 0 else LeasePolicy(0.0, True)

    async def claim(self, task_id: str, assignee: str, lease: LeasePolicy | None = None) -> Claim:
        """Take a task for `assignee`: atomically with task_claim when the server has it,
        else by setting it in progress with task_update (which another agent may race).
        `lease` is passed only when the server takes leases: others are called as before.
        The claim carries the lease the server granted and its token (kept in `held`)."""
        if not self.caps.claims:
            why = await self.update(task_id, status="in_progress", assignee=assignee)
            if why:
                return Claim(ClaimOutcome.REFUSED, why, atomic=False)
            return Claim(ClaimOutcome.CLAIMED, atomic=False)
        args: dict[str, Any] = {"id": task_id, "assignee": assignee}
        result, args, note = await self._claim_call(TASK_CLAIM, args, lease)
        if result.is_error:
            return _not_claimed(result, note)
        token, granted = claim_answer(result.text, float(args.get("lease", 0.0)))
        claim = Claim(ClaimOutcome.CLAIMED, lease=granted, token=token, note=note)
        self.held.hold(task_id, claim)
        return claim

    async def claim_next(
        self,
        goals: Sequence[str],
        assignee: str,
        lease: LeasePolicy | None = None,
        ids: Sequence[str] = (),
    ) -> NextClaim:
        """Take the next ready step of `goals` (the first ready of `ids`, when given) for
        `assignee` in one task_claim_next call: picked and claimed atomically, so it is
        never refused for a step another claimer took (only when the server has the tool:
        `caps.claim_next`). Not taken, with no id: no step was ready."""
        args: dict[str, Any] = {"assignee": assignee, "parents": builtins.list(goals)}
        if ids:
            args["ids"] = builtins.list(ids)
        result, args, note = await self._claim_call(TASK_CLAIM_NEXT, args, lease)
        if result.is_error:
            return NextClaim("", _not_claimed(result, note))
        task_id = next_claimed(result.text)
        if not task_id:
            return NextClaim("", Claim(ClaimOutcome.REFUSED, first_line(result.text), note=note))
        token, granted = claim_answer(result.text, float(args.get("lease", 0.0)))
        claim = Claim(ClaimOutcome.CLAIMED, lease=granted, token=token, note=note)
        self.held.hold(task_id, claim)
        return NextClaim(task_id, claim)

    async def _claim_call(
        self, tool: str, args: dict[str, Any], lease: LeasePolicy | None
    ) -> tuple[ToolResultLike, dict[str, Any], str]:
        """A claim call with `lease` when the server takes leases: its answer, the arguments
        it was answered for, and a note when the server refused a claim without end (then
        asked again with its default lease, as every claim after it is)."""
        if lease is not None and lease.renews and (lease.seconds > 0 or self._endless):
            args = {**args, "lease": lease.seconds}
        result = await self._call(tool, args)
        if not _endless_refused(args, result):
            return result, args, ""
        self._endless = False  # said once: later claims take the default at once
        note = (
            f"the task server needs leases (claimLease 0 refused: {first_line(result.text)})"
            "; claims take its default lease"
        )
        args = {k: v for k, v in args.items() if k != "lease"}
        return await self._call(tool, args), args, note

    async def renew(
        self, task_id: str, assignee: str, lease: LeasePolicy, progress: StepProgress | None = None
    ) -> str:
        """Renew `assignee`'s claim for the lease granted (task_heartbeat, or task_claim
        again), presenting its token, with the step's `progress` where the server keeps it:
        '' when renewed, else why not (the claim is gone)."""
        tool = TASK_HEARTBEAT if self.caps.heartbeat else TASK_CLAIM
        args = {"id": task_id, "assignee": assignee, "lease": self._renewal(task_id, lease).seconds}
        if progress is not None and self.caps.progress and tool == TASK_HEARTBEAT:
            args.update(progress.heartbeat_args())
        result = await self._call(tool, args)
        return result.text.removeprefix("error: ") if result.is_error else ""

    def _renewal(self, task_id: str, lease: LeasePolicy) -> LeasePolicy:
        """How a claim is renewed: by the lease granted when this agent claimed it."""
        held = self.held.get(task_id)
        return held.renewal if held is not None and lease.renews else lease

    async def keep(
        self,
        task_id: str,
        assignee: str,
        lease: LeasePolicy,
        lost: Callable[[str], None],
        progress: Callable[[], StepProgress] | None = None,
    ) -> None:
        """Renew the claim every third of its granted lease until cancelled, each renewal
        telling `progress()` where the server keeps it; `lost(why)` when refused. Runs for
        ever without a lease (a server without them, `claimLease: 0`)."""
        renewal = self._renewal(task_id, lease)
        if not renewal.active:
            await asyncio.Event().wait()
        while True:
            await asyncio.sleep(renewal.interval)
            told = progress() if progress is not None else None
            why = await self.renew(task_id, assignee, renewal, told)
            if why:
                lost(why)
                return

    async def release(self, task_id: str, note: str) -> Released:
        """Open a claimed task again when it is still in progress, with the claim's token:
        a server with tokens refuses when the claim is someone else's now."""
        if not (await self.read(task_id)).is_active:
            return Released(False)
        why = await self.update(task_id, status=StepState.OPEN.value, note=note)
        self.held.drop(task_id)
        return Released(not why, first_line(why, "") if why else "")

    async def reopen(self, task_id: str, note: str) -> str:
        """Open a failed, skipped or handed-back step again for whoever serves its plan
        (task_reopen clears its assignee; without it task_update): '' when done, else why."""
        if not self.caps.reopen:
            return await self.update(task_id, status=StepState.OPEN.value, note=note[:500])
        result = await self._call(TASK_REOPEN, {"id": task_id, "note": note[:500]})
        return first_line(result.text.removeprefix("error: ")) if result.is_error else ""

    async def retry(self, step_id: str, note: str = "retried") -> builtins.list[str]:
        """Reopen `step_id` and every step waiting on it that is not done or in progress
        (those failed, skipped or handed back after it): the ids reopened, in that order
        (TaskCallError naming the step refused)."""
        reopened: builtins.list[str] = []
        for task_id in retry_steps(await self.tasks(("id", "status", "blockers")), step_id):
            why = await self.reopen(task_id, note)
            if why:
                raise TaskCallError(f"{task_id} was not reopened: {why}")
            reopened.append(task_id)
        return reopened

    async def delete(self, task_id: str, *, recursive: bool = False) -> Deleted:
        """How one task_delete call ended."""
        args: dict[str, Any] = {"id": task_id, **({"recursive": True} if recursive else {})}
        result = await self._call(TASK_DELETE, args)
        if not result.is_error:
            return Deleted.DELETED
        return Deleted.TIMED_OUT if result.timed_out else Deleted.REFUSED

    async def edit(self, task_id: str, **fields: str) -> None:
        """Revise a task's title or body with `task_edit` (TaskCallError when refused)."""
        result = await self._call(TASK_EDIT, {"id": task_id, **fields})
        if result.is_error:
            raise TaskCallError(f"{TASK_EDIT} {task_id} failed: {first_line(result.text)}")

    async def depend(self, task_id: str, blocker: str, *, remove: bool = False) -> None:
        """Make `blocker` block `task_id` (or, with `remove`, no longer) with `task_dep`."""
        args: dict[str, Any] = {"id": task_id, "blocker": blocker}
        if remove:
            args["remove"] = True
        result = await self._call(TASK_DEP, args)
        if result.is_error:
            raise TaskCallError(f"{TASK_DEP} {task_id} {blocker} failed: {first_line(result.text)}")

    async def read(self, task_id: str) -> StepState:
        """The state of one task (UNKNOWN when it cannot be read)."""
        text = await self._read(TASK_READ, {"id": task_id})
        return read_state(task_status(text) if text is not None else None)

    async def body(self, task_id: str) -> str:
        """One task's body ('' when it cannot be read)."""
        text = await self._read(TASK_READ, {"id": task_id})
        data = _json_object(text) if text is not None else None
        return str(data.get("body") or "") if isinstance(data, dict) else ""

    async def status(self, task_id: str) -> StepState:
        """The state of one task, by the lightest read the server offers: a
        `task_list` of just its id and status (one query on ollie-tasks), else `task_read`.

        A server whose task_list refuses `ids`, or ignores it (its answer holds other
        tasks), is asked with task_read from then on.
        """
        if self._by_ids:
            args = {"status": "all", "ids": [task_id], "fields": ["id", "status"]}
            result = await self._call(TASK_LIST, {**args, "format": "json"})
            data = None if result.is_error else _json_object(result.text)
            tasks = data.get("tasks") if isinstance(data, dict) else None
            if isinstance(tasks, builtins.list) and len(tasks) <= 1:  # none: no such task
                return read_state(listing_statuses(result.text, {task_id}).get(task_id))
            self._by_ids = False
        return await self.read(task_id)

    async def listing(self, status: str = "all") -> str:
        """The server's own listing of its tasks with `status`, as text for a person to read
        (TaskCallError with the server's answer when it refuses)."""
        result = await self._call(TASK_LIST, {"status": status})
        if result.is_error:
            raise TaskCallError(result.text)
        return result.text

    async def tasks(self, fields: Sequence[str] = LIST_FIELDS) -> builtins.list[Task]:
        """Every task of the store, page after page (TaskCallError when it cannot be listed)."""
        args: dict[str, Any] = {"status": "all", "format": "json"}
        if self.caps.labels_by and "labels_by" not in fields:
            fields = (*fields, "labels_by")
        if self.caps.progress and "progress" not in fields:
            fields = (*fields, "progress")
        asked = {**args, "fields": builtins.list(fields)} if self.caps.list_fields else args
        result = await self._call(TASK_LIST, asked)
        if result.is_error and asked is not args:  # a server that refuses `fields`
            asked = args
            result = await self._call(TASK_LIST, asked)
        found: builtins.list[Task] = []
        for _ in range(MAX_LIST_PAGES):
            if result.is_error:
                raise TaskCallError(
                    f"the task server could not list its tasks: {result.text[:200]}"
                )
            data = json.loads(result.text)
            raw = data.get("tasks", []) if isinstance(data, dict) else data
            found.extend(Task.of(t) for t in raw if isinstance(t, dict) and "id" in t)
            cursor = listing_next(result.text)
            if not cursor:
                break
            result = await self._call(TASK_LIST, {**asked, "cursor": cursor})
        return found

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
            reads = await asyncio.gather(*(self._status_word(i) for i in missing))
            found.update((i, status) for i, status in zip(missing, reads) if status)
        return found

    async def _status_word(self, task_id: str) -> str | None:
        text = await self._read(TASK_READ, {"id": task_id})
        return task_status(text) if text is not None else None

    async def _listed_statuses(self, goal_id: str, wanted: set[str]) -> dict[str, str]:
        """The statuses a paged `task_list` of the goal's children gives, page after page."""
        args: dict[str, Any] = {"status": "all", "parent": goal_id}
        lean = {**args, "fields": ["id", "status"]}  # servers without `fields` ignore it
        listing = await self._read(TASK_LIST, lean)
        if listing is None:  # or refuse it
            listing = await self._read(TASK_LIST, args)
        found: dict[str, str] = {}
        for _ in range(MAX_LIST_PAGES):
            if listing is None:
                break
            found.update(listing_statuses(listing, wanted))
            cursor = listing_next(listing)
            if not cursor:
                break
            result = await self._call(TASK_LIST, {**lean, "format": "json", "cursor": cursor})
            listing = None if result.is_error else result.text
        return found

    async def events(self, since: int, limit: int) -> EventsPage:
        """One page of the event log after `since` (TaskCallError when the server refuses,
        ValueError when its answer does not parse: ask again with a smaller `limit`).

        ollie-tasks answers `format="page"` with `{events, next, more}`, bounded by size;
        a server that refuses that argument is asked for a plain list from then on.
        """
        args: dict[str, Any] = {"since": since, "limit": limit}
        result = None
        if self._paged_events:
            result = await self._call(TASK_EVENTS, {**args, "format": "page"})
        if result is None or result.is_error:
            result = await self._call(TASK_EVENTS, args)
            if result.is_error:
                raise TaskCallError(first_line(result.text, f"{TASK_EVENTS} failed"))
            self._paged_events = False
        return _events_page(result.text, limit)

    async def head(self) -> int | None:
        """Where the event log stands now (its newest seq, 0 when empty), in one read from
        its end; None from a server that cannot read from the end (`caps.event_tail`)."""
        if not self.caps.event_tail:
            return None
        return (await self._tail(0, 1)).next

    async def newest(self, count: int) -> builtins.list[dict[str, Any]]:
        """The newest `count` events (at most 1000; fewer when they are large), oldest
        first: read from the log's end when the server can, else paged to from the start."""
        if self.caps.event_tail:
            return (await self._tail(0, count)).events
        kept: collections.deque[dict[str, Any]] = collections.deque(maxlen=count)
        since, more = 0, True
        while more:
            page = await self.events(since, 1000)
            kept.extend(page.events)
            last = page.events[-1]["seq"] if page.events else since
            since, more = max(page.next or 0, last), page.more and last > since
        return builtins.list(kept)

    async def _tail(self, since: int, limit: int) -> EventsPage:
        """One read of the newest `limit` events after `since` (TaskCallError if refused)."""
        args = {"since": since, "limit": limit, "tail": True, "format": "page"}
        result = await self._call(TASK_EVENTS, args)
        if result.is_error:
            raise TaskCallError(first_line(result.text, f"{TASK_EVENTS} failed"))
        return _events_page(result.text, limit)

    async def ask(
        self, kind: str, what: str, asker: str, *, goal: str = "", step: str = "", timeout: float
    ) -> str:
        """Open an inbox request that waits on a person; its id (TaskCallError when the
        server has no inbox or refuses). `what` is masked by the caller before it asks."""
        if not self.caps.inbox:
            raise TaskCallError(f"the task server {self.server!r} has no inbox")
        args = {"kind": kind, "what": what, "asker": asker, "goal": goal, "step": step}
        result = await self._call(TASK_ASK, {**args, "timeout": timeout})
        if result.is_error:
            raise TaskCallError(first_line(result.text, f"{TASK_ASK} failed"))
        return result.text.strip()

    async def inbox(
        self, state: str = "open", ids: Sequence[str] = ()
    ) -> builtins.list[InboxRequest]:
        """The inbox's requests in `state` (or `ids`), oldest first, every page of them."""
        if not self.caps.inbox:
            raise TaskCallError(f"the task server {self.server!r} has no inbox")
        args: dict[str, Any] = {"state": state, "ids": builtins.list(ids), "format": "json"}
        found: builtins.list[InboxRequest] = []
        cursor = ""
        for _ in range(MAX_LIST_PAGES):
            result = await self._call(TASK_INBOX, {**args, "cursor": cursor})
            if result.is_error:
                raise TaskCallError(first_line(result.text, f"{TASK_INBOX} failed"))
            rows, cursor = inbox_page(result.text)
            found.extend(rows)
            if not cursor:
                break
        return found

    async def answer(self, request: str, answer: str, by: str = "") -> None:
        """Answer an inbox request once (TaskCallError with the server's reason if refused:
        answered already, timed out, unknown)."""
        result = await self._call(TASK_ANSWER, {"id": request, "answer": answer, "by": by})
        if result.is_error:
            raise TaskCallError(first_line(result.text, f"{TASK_ANSWER} failed"))

    async def whoami(self) -> str:
        """The user the server knows this client as (over HTTP, its token's user): '' over
        stdio, for an unnamed token, or from a server without task_whoami."""
        if not self.caps.whoami:
            return ""
        result = await self._call(TASK_WHOAMI, {})
        data = None if result.is_error else _json_object(result.text)
        user = data.get("user") if isinstance(data, dict) else None
        return user if isinstance(user, str) else ""

    async def wait_answer(
        self, request: str, timeout: float, poll: float = ANSWER_POLL
    ) -> InboxRequest | None:
        """The request once answered or expired, read again at each change the server
        signals on tasks://events (without signals: every `poll` s, at least 0.05) for up
        to `timeout` s; the last look (still open) when the time is up, None if gone."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        async with _Changes.of(self.updates) as changes:
            while True:
                changes.seen()
                rows = await self.inbox("all", [request])
                if not rows or not rows[0].open:
                    return rows[0] if rows else None
                left = deadline - loop.time()
                if left <= 0:
                    return rows[0]
                await changes.next(min(max(poll, 0.05), left), left)

    async def _read(self, tool: str, args: dict[str, Any]) -> str | None:
        """A read tool's answer, asked for with `format="json"` first; None if it fails.

        A server that refuses the argument (its plain call works) is asked in text from
        then on; one that ignores it answers text, which the parsers read as before.
        """
        if tool not in self._no_json:
            result = await self._call(tool, {**args, "format": "json"})
            if not result.is_error:
                return result.text
        plain = await self._call(tool, args)
        if plain.is_error:
            return None
        self._no_json.add(tool)
        return plain.text


def _events_page(text: str, limit: int) -> EventsPage:
    """A page (`{events, next, more}`) or a plain list of events; ValueError if unreadable."""
    data = json.loads(text)
    if isinstance(data, dict) and isinstance(data.get("events"), builtins.list):
        raw, more, next_seq = data["events"], data.get("more") is True, data.get("next")
    elif isinstance(data, builtins.list):
        raw, more, next_seq = data, len(data) >= limit, None
    else:
        raise ValueError(f"{TASK_EVENTS} answered neither a page nor a list of events")
    events = [e for e in raw if isinstance(e, dict) and isinstance(e.get("seq"), int)]
    return EventsPage(events, next_seq if isinstance(next_seq, int) else None, more)


class _Changes:
    """The store's change signals while a wait lasts: `next` returns at the next one, or
    after `poll` s when there are none (no subscription, or its stream ended)."""

    def __init__(self) -> None:
        self.signalled = asyncio.Event()
        self.following = False

    @classmethod
    @contextlib.asynccontextmanager
    async def of(cls, updates: Updates | None) -> AsyncIterator[_Changes]:
        """Follow `updates` (None: poll) in a task of its own, subscribed before it yields."""
        changes = cls()
        if updates is None:
            yield changes
            return
        subscribed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(changes._follow(updates, subscribed))
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(subscribed), SUBSCRIBE_TIMEOUT)
            yield changes
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _follow(self, updates: Updates, subscribed: asyncio.Future[None]) -> None:
        """Set `signalled` at each signal; entered and left in this one task."""
        try:
            async with updates(EVENTS_URI) as signals:
                self.following = signals is not None
                subscribed.set_result(None)
                if signals is not None:
                    async for _ in signals:
                        self.signalled.set()
        except Exception as exc:  # a lost stream: the wait polls from now on
            log.info("task events: no more change signals (%s); polling", exc)
        finally:
            self.following = False
            self.signalled.set()
            if not subscribed.done():
                subscribed.set_result(None)

    def seen(self) -> None:
        """What was signalled so far is about to be read."""
        self.signalled.clear()

    async def next(self, poll: float, left: float) -> None:
        """Until the next signal (at most `left` s, and QUIET_LOOK), or `poll` s when
        none can come."""
        if not self.following:
            await asyncio.sleep(poll)
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.signalled.wait(), min(left, QUIET_LOOK))
