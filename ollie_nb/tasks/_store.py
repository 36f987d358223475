"""The task store's rules, once for both backends: tasks, blocking edges, an event log."""

from __future__ import annotations

import builtins
import contextvars
import dataclasses
import hashlib
import json
import math
import re
import secrets
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NamedTuple, NoReturn, Protocol, TypeVar

from ollie_nb.tasks._errors import (
    CycleError,
    InvalidTaskError,
    StoreError,
    UnknownTaskError,
)
from ollie_nb.tasks._progress import CLEARED, PROGRESS_COLUMNS, Progress, progress_by_task, stored
from ollie_nb.tasks._schema import CLOSED_STATUSES, STATUSES

MAX_TITLE_CHARS = 500
MAX_BODY_BYTES = 64 * 1024
MAX_NOTE_BYTES = 16 * 1024
MAX_ASSIGNEE_CHARS = 200
MAX_LABEL_CHARS = 100
MAX_LABELS = 50
MAX_BLOCKERS = 200
MAX_EVENTS_PAGE = 1000
MAX_DEPTH = 100
"""How deep a parent chain may go: a goal, its steps, their sub-steps... at most this many levels."""
MAX_IDS = 500
"""How many ids one `list(ids=...)` call may name."""

DEFAULT_LEASE = 300.0
"""Seconds a claim holds when the claimer names no lease; renewed by claiming again."""

MAX_LEASE = 7 * 24 * 3600.0
"""The longest lease a claim can ask for (a week); 0 asks for none."""

LEASE_CAP = 3600.0
"""The longest lease an MCP client gets by default (`serve --max-lease` changes it)."""

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""C0 controls but tab, newline and carriage return, DEL and C1: refused in stored text."""

_READ_ATTEMPTS = 3

LIST_FILTERS: tuple[str, ...] = (*STATUSES, "ready", "all")
"""What `TaskStore.list(status=...)` accepts: a status, `ready` or `all`."""

DETACH_PARENT = "-"
"""`edit(parent=DETACH_PARENT)` moves a task to the top level."""

ID_PREFIX = "t-"
# Crockford's base32 alphabet in lower case: no i, l, o, u, so ids read aloud cleanly.
_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_ID_LENGTH = 5

_T = TypeVar("_T")
_S = TypeVar("_S", bound="SqlTaskStore")


def _now() -> str:
    """Current UTC time as ISO 8601 with milliseconds, e.g. 2025-01-31T12:00:00.123Z."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _epoch_iso(seconds: float | None) -> str:
    """A lease end (seconds since the epoch) in the store's time format; '' for none."""
    if seconds is None:
        return ""
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def plural(count: int, word: str, many: str = "") -> str:
    """`1 blocker`, `2 blockers`; `many` for irregular plurals (`child`, `children`)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def _new_id(length: int) -> str:
    """A fresh random task id such as `t-7kq2m`."""
    return ID_PREFIX + "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


@dataclass(frozen=True)
class Caller:
    """An MCP client as the store sees it: the claim token it presents ('' for none) and
    the user its HTTP token names ('' when the server knows no names)."""

    token: str = ""
    user: str = ""


@dataclass(frozen=True)
class LeaseBounds:
    """The leases a server grants its MCP clients: at most `cap` seconds, 0 only if `endless`."""

    cap: float = LEASE_CAP
    endless: bool = False

    def grant(self, asked: float) -> float:
        """The lease to grant for `asked` seconds: refused at 0 unless endless, cut to the cap."""
        seconds = _lease(asked) or 0.0
        if seconds == 0 and not self.endless:
            raise InvalidTaskError(
                f"lease 0 (a claim without end) is refused by this server: give 1 to {self.cap:g} "
                "seconds and renew the claim while working"
            )
        return min(seconds, self.cap)


@dataclass(frozen=True)
class Claim:
    """A claim task_claim made: the task and the token its holder presents from then on."""

    task: Task
    token: str


@dataclass(frozen=True)
class Claimed:
    """A task just claimed, read in the claim's own transaction (no full re-read)."""

    id: str
    title: str
    status: str
    parent: str
    assignee: str
    lease_until: str

    def ref(self) -> TaskRef:
        """The one-line view of this task: id, status, title."""
        return TaskRef(self.id, self.status, self.title)


@dataclass(frozen=True)
class Taken:
    """What `take` or `claim_next` claimed: the task and the token its holder presents."""

    task: Claimed
    token: str = dataclasses.field(repr=False)


# The HTTP user a change is made by, for its events: set around one transaction's work.
_ACTOR: contextvars.ContextVar[str] = contextvars.ContextVar("ollie_tasks_actor", default="")


def _actor(caller: Caller | None) -> str:
    """The user a change is logged as: an HTTP user, else nobody named."""
    return caller.user if caller is not None else ""


def _digest(token: str) -> str:
    """What the store keeps of a claim token: its SHA-256, so a read of the DB holds none."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TaskRef:
    """A neighbour of a task (blocker, dependent, child): enough to name it."""

    id: str
    status: str
    title: str


class TaskSummary(NamedTuple):
    """One task as a list shows it; `waiting_on` holds its blockers that are not done yet.

    A named tuple rather than a dataclass: lists build thousands of these, and tuples are
    several times cheaper to create.
    """

    id: str
    title: str
    status: str
    parent: str
    assignee: str
    labels: tuple[str, ...]
    waiting_on: tuple[str, ...]
    created_at: str
    updated_at: str
    lease_until: str = ""
    """When the claim's lease ends ('' for no lease)."""
    body: str = ""
    """The task's body when the list was asked for bodies, else ''."""
    labels_by: tuple[tuple[str, str], ...] = ()
    """(label, setter) for the labels an HTTP user set, when the list was asked for them."""
    progress: Progress | None = None
    """What its holder's last heartbeat told, when the list was asked for it."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (`body`, `labels_by`, `progress` only when the list read them)."""
        document = {
            **self._asdict(),
            "labels": list(self.labels),
            "waiting_on": list(self.waiting_on),
            "labels_by": dict(self.labels_by),
            "progress": dataclasses.asdict(self.progress) if self.progress else None,
        }
        if not self.body:
            del document["body"]
        if not self.labels_by:
            del document["labels_by"]
        if self.progress is None:
            del document["progress"]
        return document


@dataclass(frozen=True)
class Note:
    """A timestamped note appended by `TaskStore.update(note=...)`."""

    time: str
    text: str


@dataclass(frozen=True)
class Task:
    """One task with everything around it: notes, blockers, dependents, children."""

    id: str
    title: str
    body: str
    status: str
    ready: bool
    parent: TaskRef | None
    assignee: str
    labels: tuple[str, ...]
    notes: tuple[Note, ...]
    blockers: tuple[TaskRef, ...]
    dependents: tuple[TaskRef, ...]
    children: tuple[TaskRef, ...]
    created_at: str
    updated_at: str
    closed_at: str
    lease_until: str = ""
    """When the claim's lease ends ('' for no lease, or not claimed)."""
    notes_total: int = 0
    """How many notes the task has; `notes` may hold only some of them (the newest)."""
    notes_start: int = 1
    """The number (1 = the oldest) of the first note in `notes`."""
    labels_by: dict[str, str] = dataclasses.field(default_factory=dict)
    """Who set each label, for those an HTTP user set (a stdio or CLI caller is unnamed)."""
    progress: Progress | None = None
    """What the claim's holder last told by heartbeat (None: nothing since it was claimed)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form."""
        return dataclasses.asdict(self)

    def ref(self) -> TaskRef:
        """The one-line view of this task: id, status, title."""
        return TaskRef(self.id, self.status, self.title)


@dataclass(frozen=True)
class TaskNode:
    """A task and its subtree of children, for `TaskStore.tree`."""

    task: TaskSummary
    children: tuple[TaskNode, ...]

    def to_dict(self) -> dict[str, Any]:
        """Nested JSON-ready form: the summary's fields plus `children` (walked without
        recursion, so a chain of any depth converts)."""
        top: dict[str, Any] = {**self.task.to_dict(), "children": []}
        stack: list[tuple[TaskNode, dict[str, Any]]] = [(self, top)]
        while stack:
            node, out = stack.pop()
            for child in node.children:
                converted = {**child.task.to_dict(), "children": []}
                out["children"].append(converted)
                stack.append((child, converted))
        return top


@dataclass(frozen=True)
class Event:
    """One entry of the event log; `seq` only grows, so it doubles as a cursor."""

    seq: int
    time: str
    type: str
    task: str
    payload: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form."""
        return dataclasses.asdict(self)


# --- argument checks (run before any lock is taken) -------------------------------------------


def _task_id(raw: str, what: str = "id") -> str:
    """Normalise an id given by a caller; ids are case-insensitive."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidTaskError(f"{what} is empty: give a task id such as t-7kq2m")
    return raw.strip().lower()


def _plain(text: str, what: str) -> str:
    """`text` unless it holds a control character that could drive a terminal (ESC, BEL...)."""
    found = _CONTROL.search(text)
    if found is not None:
        raise InvalidTaskError(
            f"{what} holds the control character {found.group()!a} at {found.start()}: "
            "remove it (tab, newline and carriage return are the only ones allowed)"
        )
    return text


def _title(raw: str) -> str:
    # Checked before strip(): str.strip() takes C1's NEL and C0's separators for spaces.
    title = _plain(raw, "title").strip() if isinstance(raw, str) else ""
    if not title:
        raise InvalidTaskError("title is empty: give the task a short one-line title")
    if "\n" in title or "\r" in title:
        raise InvalidTaskError("title must be one line: put the details in body")
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidTaskError(
            f"title is {len(title)} characters, the limit is {MAX_TITLE_CHARS}: "
            "shorten it and put the details in body"
        )
    return title


def _limited_text(text: str, what: str, limit: int) -> str:
    _plain(text, what)
    size = len(text.encode("utf-8"))
    if size > limit:
        raise InvalidTaskError(
            f"{what} is {size} bytes, the limit is {limit} ({limit // 1024} KiB): "
            "shorten it or split the work into several tasks"
        )
    return text


def _assignee(raw: str) -> str:
    assignee = _plain(raw, "assignee").strip()
    if len(assignee) > MAX_ASSIGNEE_CHARS or "\n" in assignee:
        raise InvalidTaskError(
            f"assignee must be one line of at most {MAX_ASSIGNEE_CHARS} characters"
        )
    return assignee


def _labels(raw: Iterable[str]) -> list[str]:
    labels: list[str] = []
    for item in raw:
        label = _plain(item, "label").strip() if isinstance(item, str) else ""
        if not label or len(label) > MAX_LABEL_CHARS or "," in label or label.split() != [label]:
            raise InvalidTaskError(
                f"bad label {item!r}: a label is 1-{MAX_LABEL_CHARS} characters "
                "without spaces or commas"
            )
        if label not in labels:
            labels.append(label)
    if len(labels) > MAX_LABELS:
        raise InvalidTaskError(f"{len(labels)} labels given, the limit is {MAX_LABELS}")
    return labels


def _status(raw: str, allowed: Sequence[str] = STATUSES) -> str:
    status = raw.strip().lower()
    if status not in allowed:
        raise InvalidTaskError(f"bad status {raw!r}: use one of {', '.join(allowed)}")
    return status


def _lease(raw: float) -> float | None:
    """A claim's lease in seconds, None for none (0)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise InvalidTaskError(f"lease must be a number of seconds, not {raw!r}")
    if not 0 <= raw <= MAX_LEASE:
        raise InvalidTaskError(f"lease is {raw:g} s: give 0 (no lease) to {MAX_LEASE:g} seconds")
    return float(raw) or None


def _claimer(raw: str, caller: Caller | None = None) -> str:
    """Who claims: the assignee given; over HTTP with named users, the caller's own name."""
    who = _assignee(raw)
    user = caller.user if caller is not None else ""
    if user and who not in ("", user):
        raise InvalidTaskError(
            f"you are {user} on this server: claim, renew and take tasks as {user}, not {who}"
        )
    who = who or user
    if not who:
        raise InvalidTaskError("assignee is empty: say who claims the task")
    return who


def _unique_ids(raw: Iterable[str], what: str) -> list[str]:
    ids: list[str] = []
    for item in raw:
        task_id = _task_id(item, what)
        if task_id not in ids:
            ids.append(task_id)
    return ids


# --- SQL that differs between the backends ---------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    """The few SQL fragments SQLite and PostgreSQL spell differently; the rest is shared."""

    name: str
    summaries: str
    ready_summaries: str
    bare_summaries: str
    blocked: str
    clock: str
    """The store's clock in seconds since the epoch: leases end by it, never a client's."""
    lock_next: str = ""
    """What a claim-next's pick adds to lock its row (PostgreSQL: FOR UPDATE SKIP LOCKED)."""


_SUMMARY_SELECT = """
SELECT t.id, t.title, t.status, coalesce(t.parent, ''), t.assignee,
       (SELECT {labels} FROM labels l WHERE l.task = t.id),
       {waiting},
       t.created_at, t.updated_at, t.lease_until, '' AS body
FROM tasks t
"""
_NO_BODY = "'' AS body"  # a list that reads bodies selects t.body in its place


def make_dialect(
    name: str,
    aggregate: Callable[[str], str],
    status_index: str,
    clock: str,
    lock_next: str = "",
) -> Dialect:
    """Build a backend's fragments from its list aggregate, blocker-status index hint, clock."""
    waiting = (
        f"(SELECT {aggregate('d.blocker')} FROM deps d JOIN tasks b {status_index}"
        " ON b.id = d.blocker WHERE d.task = t.id AND b.status <> 'done')"
    )
    labels = aggregate("l.label")
    return Dialect(
        name=name,
        summaries=_SUMMARY_SELECT.format(labels=labels, waiting=waiting),
        # For `ready` the blockers not done are empty by definition: skip that subquery.
        ready_summaries=_SUMMARY_SELECT.format(labels=labels, waiting="NULL"),
        # Neither labels nor blockers: a list that shows only ids and statuses.
        bare_summaries=_SUMMARY_SELECT.replace(
            "(SELECT {labels} FROM labels l WHERE l.task = t.id)", "NULL"
        ).format(waiting="NULL"),
        # A task is blocked while any of its blockers is not done.
        blocked=(
            f"EXISTS (SELECT 1 FROM deps d JOIN tasks b {status_index} ON b.id = d.blocker "
            "WHERE d.task = t.id AND b.status <> 'done')"
        ),
        clock=clock,
        lock_next=lock_next,
    )


_CLOSED_SQL = "(" + ", ".join(f"'{s}'" for s in sorted(CLOSED_STATUSES)) + ")"


def _summary(row: Sequence[Any]) -> TaskSummary:
    # group_concat walks the (task, label) and (task, blocker) primary keys, so both
    # lists come out sorted already.
    (
        task_id,
        title,
        status,
        parent,
        assignee,
        labels,
        waiting,
        created_at,
        updated_at,
        lease,
        body,
    ) = row
    return TaskSummary(
        task_id,
        title,
        status,
        parent,
        assignee,
        tuple(labels.split(",")) if labels else (),
        tuple(waiting.split(",")) if waiting else (),
        created_at,
        updated_at,
        _epoch_iso(lease),
        body or "",
    )


def _with_setters(
    conn: Conn, tasks: list[TaskSummary], condition: str, params: Sequence[Any]
) -> list[TaskSummary]:
    """`tasks` (listed with `condition`) with `labels_by`, read in one query on `labels`."""
    sql = (
        "SELECT l.task, l.label, l.setter FROM labels l JOIN tasks t ON t.id = l.task"
        + (condition + " AND" if condition else " WHERE")
        + " l.setter IS NOT NULL ORDER BY l.task, l.label"
    )
    by: dict[str, list[tuple[str, str]]] = {}
    for task_id, label, setter in conn.execute(sql, params):
        by.setdefault(task_id, []).append((label, setter))
    return [t._replace(labels_by=tuple(by[t.id])) if t.id in by else t for t in tasks]


class Cursor(Protocol):
    """What the store reads from a statement: rows, one row, or the count of rows changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """The DB-API subset the shared store logic uses; `?` placeholders on both backends."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any: ...


def _refs(conn: Conn, sql: str, params: Sequence[Any]) -> tuple[TaskRef, ...]:
    return tuple(TaskRef(*row) for row in conn.execute(sql, params))


class SqlTaskStore(ABC):
    """Tasks with parents, blockers, labels, notes and an event log, kept in a SQL database.

    The rules live here once; a backend supplies its connection handling (`_transact`),
    its `Dialect` and the way it tells other processes about a change (`watch_changes`).
    Every change is one transaction that also appends its events, and backends run write
    transactions one at a time, so event seqs commit in order and `since` cursors never
    skip an event. Claims may carry a lease, which no process needs to watch: every
    transaction first hands back the claims whose lease ran out (see `_run`).
    """

    dialect: Dialect
    max_concurrency: int = 1
    changes_are_events: bool = False  # `watch_changes` reports only event-log growth
    """How many worker threads may use the store at once."""

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the data lives, safe to print (a file path, or a URL without its password)."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection(s); the store is unusable afterwards."""

    @abstractmethod
    def _transact(self, work: Callable[[Conn], _T], *, write: bool) -> _T:
        """Run `work` in one transaction; writes are serialised across processes."""

    def _run(self, work: Callable[[Conn], _T], *, write: bool, actor: str = "") -> _T:
        """Run `work` in one transaction, the claims whose lease ran out handed back first.

        A write expires them in its own transaction, so a claim finds a lapsed claim open
        atomically: never claimed twice, never lost. A read that finds one lapsed lets a
        write expire it and reads again, so every read sees the leases as they stand.
        `actor` (an HTTP user) is recorded as `by` in the events of `work`.
        """
        if write:
            return self._transact(lambda conn: self._expire_then(work, conn, actor), write=True)
        for _ in range(_READ_ATTEMPTS):
            outcome = self._transact(
                lambda conn: None if self._lapsed(conn) else (work(conn),), write=False
            )
            if outcome is not None:
                return outcome[0]
            self._transact(self._expire_leases, write=True)
        return self._transact(work, write=False)

    def _lapsed(self, conn: Conn) -> bool:
        """True when some claim's lease has ended by the store's clock."""
        sql = f"SELECT 1 FROM tasks WHERE lease_until <= {self.dialect.clock} LIMIT 1"
        return conn.execute(sql).fetchone() is not None

    def _expire_then(self, work: Callable[[Conn], _T], conn: Conn, actor: str) -> _T:
        self._expire_leases(conn)
        reset = _ACTOR.set(actor)
        try:
            return work(conn)
        finally:
            _ACTOR.reset(reset)

    def _expire_leases(self, conn: Conn) -> None:
        """Reopen every claim whose lease has ended, each with its `lease_expired` event."""
        lapsed = conn.execute(
            "SELECT id, assignee, lease_until FROM tasks "
            f"WHERE lease_until <= {self.dialect.clock} ORDER BY lease_until, id"
        ).fetchall()
        now = _now()
        for task_id, holder, until in lapsed:
            reopened = conn.execute(
                "UPDATE tasks SET status = 'open', assignee = '', lease_until = NULL, "
                "claim_token = NULL, updated_at = ? WHERE id = ? AND lease_until = ?",
                (now, task_id, until),
            ).rowcount
            if reopened != 1:  # renewed meanwhile (only possible without the write lock)
                continue
            payload = {"assignee": holder, "lease_until": _epoch_iso(until)}
            self._event(conn, now, "lease_expired", task_id, payload)
            self._event(
                conn,
                now,
                "status_changed",
                task_id,
                {"from": "in_progress", "to": "open", "reason": "lease_expired"},
            )
            self._reopened(conn)

    @abstractmethod
    async def watch_changes(
        self, on_change: Callable[[], Awaitable[None]], interval: float
    ) -> None:
        """Call `on_change` whenever another process may have changed the data; runs forever."""

    def _changed(self, conn: Conn) -> None:  # noqa: B027 (a hook: most backends need nothing)
        """Hook run once per logged event inside the transaction (PostgreSQL notifies here)."""

    def _reopened(self, conn: Conn) -> None:  # noqa: B027 (a hook: most backends need nothing)
        """Hook run when a lapsed claim reopens, maybe inside a read of this very store.

        The server signals the changes it makes itself, but a read's lapse is not one it
        knows of: PostgreSQL tells every server, this one included, to look again.
        """

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"

    def _event(
        self, conn: Conn, now: str, type_: str, task_id: str, payload: dict[str, Any]
    ) -> None:
        if actor := _ACTOR.get():
            payload = {**payload, "by": actor}
        conn.execute(
            "INSERT INTO events (time, type, task, payload) VALUES (?, ?, ?, ?)",
            (now, type_, task_id, json.dumps(payload, ensure_ascii=False, separators=(",", ":"))),
        )
        self._changed(conn)

    @staticmethod
    def _require(conn: Conn, task_id: str) -> tuple[str, str, str | None]:
        """Return (status, title, parent) of a task, or raise UnknownTaskError."""
        row = conn.execute(
            "SELECT status, title, parent FROM tasks WHERE id = ?", (task_id,)
        ).fetchone()
        if row is None:
            raise UnknownTaskError(f"no task with id {task_id!r} (list the tasks to see valid ids)")
        return row

    def _emit_unblocked(
        self,
        conn: Conn,
        now: str,
        candidates: Iterable[str],
        by: str,
        reason: str,
    ) -> tuple[TaskRef, ...]:
        """Log `unblocked` for each candidate that is still live and now waits on nothing."""
        unblocked: list[TaskRef] = []
        for task_id in candidates:
            row = conn.execute(
                f"SELECT t.id, t.status, t.title FROM tasks t WHERE t.id = ? "
                f"AND t.status NOT IN {_CLOSED_SQL} AND NOT {self.dialect.blocked}",
                (task_id,),
            ).fetchone()
            if row is not None:
                unblocked.append(TaskRef(*row))
                self._event(conn, now, "unblocked", task_id, {"by": by, "reason": reason})
        return tuple(unblocked)

    # --- writes ------------------------------------------------------------------------------

    def create(
        self,
        title: str,
        body: str = "",
        parent: str = "",
        blockers: Iterable[str] = (),
        labels: Iterable[str] = (),
        *,
        caller: Caller | None = None,
    ) -> str:
        """Create an open task and return its new id (`caller`: whose events, over HTTP)."""
        title = _title(title)
        body = _limited_text(body, "body", MAX_BODY_BYTES)
        parent_id = _task_id(parent, "parent") if parent.strip() else None
        blocker_ids = _unique_ids(blockers, "blocker")
        if len(blocker_ids) > MAX_BLOCKERS:
            raise InvalidTaskError(
                f"{len(blocker_ids)} blockers given, the limit is {MAX_BLOCKERS}"
            )
        label_list = _labels(labels)

        def work(conn: Conn) -> str:
            if parent_id is not None:
                self._require(conn, parent_id)
                self._check_depth(conn, parent_id, 1)
            for blocker in blocker_ids:
                self._require(conn, blocker)
            now = _now()
            task_id = self._insert_task(conn, title, body, parent_id, now)
            conn.executemany(
                "INSERT INTO deps (task, blocker) VALUES (?, ?)",
                [(task_id, b) for b in blocker_ids],
            )
            setter = _actor(caller) or None
            conn.executemany(
                "INSERT INTO labels (task, label, setter) VALUES (?, ?, ?)",
                [(task_id, label, setter) for label in label_list],
            )
            payload = {
                "title": title,
                "parent": parent_id or "",
                "blockers": blocker_ids,
                "labels": label_list,
            }
            self._event(conn, now, "created", task_id, payload)
            return task_id

        return self._run(work, write=True, actor=_actor(caller))

    @staticmethod
    def _insert_task(conn: Conn, title: str, body: str, parent: str | None, now: str) -> str:
        """Insert the task row under a fresh random id, drawing again on a collision."""
        for attempt in range(20):
            task_id = _new_id(_ID_LENGTH + attempt // 5)
            # ON CONFLICT DO NOTHING rather than catching the error: on PostgreSQL a failed
            # statement would abort the whole transaction.
            inserted = conn.execute(
                "INSERT INTO tasks (id, title, body, parent, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (task_id, title, body, parent, now, now),
            ).rowcount
            if inserted == 1:
                return task_id
        raise StoreError("could not draw an unused task id; the id space looks exhausted")

    def update(
        self,
        task_id: str,
        status: str = "",
        assignee: str = "",
        note: str = "",
        *,
        caller: Caller | None = None,
    ) -> tuple[TaskRef, ...]:
        """Change status and/or assignee, and/or append a note; return the tasks this unblocked.

        An MCP `caller` (None: the trusted CLI) changes a task task_claim holds only with
        that claim's token; a task no task_claim holds stays free to update.
        """
        task_id = _task_id(task_id)
        new_status = _status(status) if status.strip() else ""
        new_assignee = _assignee(assignee)
        if new_status == "in_progress" and caller is not None and caller.user:
            new_assignee = _claimer(new_assignee, caller)
        note = _limited_text(_plain(note, "note").strip(), "note", MAX_NOTE_BYTES)
        if not (new_status or new_assignee or note):
            raise InvalidTaskError("nothing to update: give status, assignee or note")

        def work(conn: Conn) -> tuple[TaskRef, ...]:
            old_status = self._require(conn, task_id)[0]
            if caller is not None:
                self._check_token(conn, task_id, caller)
            now = _now()
            unblocked: tuple[TaskRef, ...] = ()
            changed = False
            if new_status and new_status != old_status:
                self._set_status(conn, now, task_id, old_status, new_status)
                changed = True
                if new_status == "done":
                    unblocked = self._finish(conn, now, task_id)
            payload: dict[str, Any] = {}
            if new_assignee:
                # Handing a claimed task to someone else ends the claim: its token is void.
                conn.execute(
                    "UPDATE tasks SET claim_token = CASE WHEN assignee = ? THEN claim_token END, "
                    "assignee = ? WHERE id = ?",
                    (new_assignee, new_assignee, task_id),
                )
                payload["assignee"] = new_assignee
            if note:
                conn.execute(
                    "INSERT INTO notes (task, time, text) VALUES (?, ?, ?)", (task_id, now, note)
                )
                payload["note"] = note
            if payload:
                self._event(conn, now, "updated", task_id, payload)
                changed = True
            if changed:
                conn.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (now, task_id))
            return unblocked

        return self._run(work, write=True, actor=_actor(caller))

    def reopen(self, task_id: str, note: str = "", *, caller: Caller | None = None) -> str:
        """Open a failed, cancelled or handed-back task again for anyone to claim: status
        open, no assignee, no claim (a task someone works now is refused); its old status."""
        task_id = _task_id(task_id)
        note = _limited_text(_plain(note, "note").strip(), "note", MAX_NOTE_BYTES)

        def work(conn: Conn) -> str:
            old_status = self._require(conn, task_id)[0]
            if old_status in ("in_progress", "done"):
                raise InvalidTaskError(
                    f"task {task_id} is {old_status}: only a step not done reopens"
                )
            now = _now()
            if old_status != "open":
                self._set_status(conn, now, task_id, old_status, "open")
            conn.execute(
                "UPDATE tasks SET assignee = '', claim_token = NULL, lease_until = NULL, "
                "updated_at = ? WHERE id = ?",
                (now, task_id),
            )
            payload: dict[str, Any] = {"reopened": old_status, "assignee": ""}
            if note:
                conn.execute(
                    "INSERT INTO notes (task, time, text) VALUES (?, ?, ?)", (task_id, now, note)
                )
                payload["note"] = note
            self._event(conn, now, "updated", task_id, payload)
            return old_status

        return self._run(work, write=True, actor=_actor(caller))

    def _set_status(self, conn: Conn, now: str, task_id: str, old: str, new: str) -> None:
        """Move a task from status `old` to `new`; any claim on it ends (lease and token)."""
        if new in CLOSED_STATUSES:
            closed_at = None if old in CLOSED_STATUSES else now
            conn.execute(
                "UPDATE tasks SET status = ?, closed_at = coalesce(?, closed_at), "
                "lease_until = NULL, claim_token = NULL WHERE id = ?",
                (new, closed_at, task_id),
            )
        else:
            conn.execute(
                "UPDATE tasks SET status = ?, closed_at = NULL, lease_until = NULL, "
                "claim_token = NULL WHERE id = ?",
                (new, task_id),
            )
        self._event(conn, now, "status_changed", task_id, {"from": old, "to": new})

    def _finish(self, conn: Conn, now: str, task_id: str) -> tuple[TaskRef, ...]:
        """Log what a task's getting done unblocked and close the goals it finished."""
        dependents = [
            row[0]
            for row in conn.execute(
                "SELECT task FROM deps WHERE blocker = ? ORDER BY task", (task_id,)
            )
        ]
        unblocked = self._emit_unblocked(conn, now, dependents, task_id, "done")
        return unblocked + self._close_finished_goals(conn, now, task_id)

    @staticmethod
    def _check_token(conn: Conn, task_id: str, caller: Caller) -> None:
        """Refuse `caller`'s change unless it presents the token of the claim holding the
        task, or none when no task_claim holds it (a token of a claim gone is refused)."""
        status, holder, stored = conn.execute(
            "SELECT status, assignee, claim_token FROM tasks WHERE id = ?", (task_id,)
        ).fetchone()
        given = _digest(caller.token) if caller.token else None
        if stored == given:
            return
        if stored is None:
            raise InvalidTaskError(
                f"{task_id} is {status}: the claim this token was for is gone (its lease ran "
                "out, or it was released or handed over): stop working on it"
            )
        what = "the token given is not the token" if given else "pass the token"
        raise InvalidTaskError(
            f"{task_id} is claimed by {holder} with task_claim: {what} of that claim "
            "(task_claim's answer); only its holder may renew, settle, release or reassign it"
        )

    def _close_finished_goals(self, conn: Conn, now: str, task_id: str) -> tuple[TaskRef, ...]:
        """Mark done each goal above `task_id` whose children are now all done.

        A goal is closed once, when its last open child gets done; reopening a child later
        leaves the goal as it is (the goal's dependents may have started already), so
        whoever reopens the work also decides whether the goal is open again.
        """
        unblocked: tuple[TaskRef, ...] = ()
        (parent,) = conn.execute("SELECT parent FROM tasks WHERE id = ?", (task_id,)).fetchone()
        while parent is not None:
            row = conn.execute(
                f"SELECT status, parent FROM tasks WHERE id = ? AND status NOT IN {_CLOSED_SQL} "
                "AND NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent = ? AND c.status <> 'done')",
                (parent, parent),
            ).fetchone()
            if row is None:
                break
            old_status, grandparent = row
            conn.execute(
                "UPDATE tasks SET status = 'done', closed_at = ?, updated_at = ? WHERE id = ?",
                (now, now, parent),
            )
            payload = {"from": old_status, "to": "done", "reason": "children_done"}
            self._event(conn, now, "status_changed", parent, payload)
            dependents = [
                r[0]
                for r in conn.execute(
                    "SELECT task FROM deps WHERE blocker = ? ORDER BY task", (parent,)
                )
            ]
            unblocked += self._emit_unblocked(conn, now, dependents, parent, "done")
            parent = grandparent
        return unblocked

    def claim(
        self,
        task_id: str,
        assignee: str,
        lease: float = DEFAULT_LEASE,
        *,
        caller: Caller | None = None,
    ) -> Claim:
        """Take a ready, unclaimed task for `assignee`: in_progress, in one conditional UPDATE.

        Of several claimers racing for one task exactly one wins, on both backends, and the
        others get an error saying who holds it. The claim holds for `lease` seconds (0:
        until the task changes status) and answers with a fresh token its holder presents
        to change the task from then on. Claiming again a task one holds (with its token)
        renews the lease and logs nothing, so a retried call doubles as a heartbeat.
        """
        taken = self.take(task_id, assignee, lease, caller=caller)
        return Claim(self.get(taken.task.id), taken.token)

    def take(
        self,
        task_id: str,
        assignee: str,
        lease: float = DEFAULT_LEASE,
        *,
        caller: Caller | None = None,
    ) -> Taken:
        """`claim`, answered with the task's row as the claim's transaction left it (what
        the server says of a claim: no full re-read of the task)."""
        task_id, seconds, who = _task_id(task_id), _lease(lease), _claimer(assignee, caller)
        fresh = secrets.token_urlsafe(24)

        def work(conn: Conn) -> Taken:
            token = fresh
            if not self._take(conn, task_id, who, seconds, fresh):
                token = self._claim_again(conn, task_id, who, seconds, caller, fresh)
            return Taken(self._claimed(conn, task_id), token)

        return self._run(work, write=True, actor=_actor(caller))

    @staticmethod
    def _claimed(conn: Conn, task_id: str) -> Claimed:
        """The row of a task just claimed, as a claim's answer names it."""
        row = conn.execute(
            "SELECT id, title, status, coalesce(parent, ''), assignee, lease_until "
            "FROM tasks WHERE id = ?",
            (task_id,),
        ).fetchone()
        return Claimed(row[0], row[1], row[2], row[3], row[4], _epoch_iso(row[5]))

    def _take(
        self,
        conn: Conn,
        task_id: str,
        who: str,
        seconds: float | None,
        token: str,
        *,
        anyones: bool = False,
    ) -> bool:
        """Claim `task_id` for `who` if it is ready and unclaimed (one conditional UPDATE,
        with its events); False when it is not. An open task assigned to another is not
        `who`'s to take unless `anyones` (claim_next: a step handed back is anyone's)."""
        now = _now()
        mine = "" if anyones else "AND assignee IN ('', ?) "
        claimed = conn.execute(
            "UPDATE tasks SET status = 'in_progress', assignee = ?, updated_at = ?, "
            f"lease_until = {self.dialect.clock} + ?, claim_token = ?, {CLEARED} "
            f"WHERE id = ? AND status = 'open' {mine}"
            "AND NOT EXISTS (SELECT 1 FROM deps d JOIN tasks b ON b.id = d.blocker "
            "WHERE d.task = ? AND b.status <> 'done')",
            (who, now, seconds, _digest(token), task_id, *(() if anyones else (who,)), task_id),
        ).rowcount
        if claimed != 1:
            return False
        self._event(conn, now, "status_changed", task_id, {"from": "open", "to": "in_progress"})
        self._event(conn, now, "claimed", task_id, {"assignee": who, "lease": seconds or 0})
        return True

    def claim_next(
        self,
        parents: Sequence[str],
        assignee: str,
        lease: float = DEFAULT_LEASE,
        *,
        ids: Sequence[str] = (),
        caller: Caller | None = None,
    ) -> Taken | None:
        """Claim the first ready, unclaimed step of the goals `parents` (of `ids`, in their
        order, when given) for `assignee`, in one write transaction: None when none is ready.

        The pick and the claim share the transaction (writes are serialised, and PostgreSQL
        also locks the row picked), so two claimers never get the same step, and neither is
        refused one another took: each gets the next one. An open step is unclaimed whoever
        it names (a step handed back keeps its last holder's name), so none is stranded.
        """
        goals = _unique_ids(parents, "parent")
        wanted = _unique_ids(ids, "id")
        if not goals and not wanted:
            raise InvalidTaskError("give the goals (parents) or the ids to claim the next step of")
        if len(goals) > MAX_IDS or len(wanted) > MAX_IDS:
            raise InvalidTaskError(f"at most {MAX_IDS} parents and {MAX_IDS} ids")
        seconds, who = _lease(lease), _claimer(assignee, caller)
        fresh = secrets.token_urlsafe(24)

        def work(conn: Conn) -> Taken | None:
            task_id = self._pick_next(conn, goals, wanted)
            if task_id is None or not self._take(conn, task_id, who, seconds, fresh, anyones=True):
                return None
            return Taken(self._claimed(conn, task_id), fresh)

        return self._run(work, write=True, actor=_actor(caller))

    def _pick_next(self, conn: Conn, goals: Sequence[str], wanted: Sequence[str]) -> str | None:
        """The id of the first step ready to claim now: of `wanted` in its order, else the
        oldest ready child of `goals`; None when there is none."""
        where = f"t.status = 'open' AND NOT {self.dialect.blocked}"
        params: list[Any] = []
        if goals:
            where += f" AND t.parent IN ({', '.join('?' * len(goals))})"
            params += goals
        if wanted:
            where += f" AND t.id IN ({', '.join('?' * len(wanted))})"
            params += wanted
        rows = conn.execute(
            f"SELECT t.id FROM tasks t WHERE {where} ORDER BY t.rowid"
            + ("" if wanted else " LIMIT 1")
            + self.dialect.lock_next,
            params,
        ).fetchall()
        found = {r[0] for r in rows}
        order = wanted or [r[0] for r in rows]
        return next((i for i in order if i in found), None)

    def _claim_again(
        self,
        conn: Conn,
        task_id: str,
        who: str,
        seconds: float | None,
        caller: Caller | None,
        fresh: str,
    ) -> str:
        """Renew `who`'s own claim and return its token; a client must present the token
        (a task set in progress without task_claim is bound to `fresh` now)."""
        row = conn.execute(
            "SELECT claim_token FROM tasks WHERE id = ? AND status = 'in_progress' AND assignee = ?",
            (task_id, who),
        ).fetchone()
        if row is None:
            self._refuse_claim(conn, task_id, who)
        if caller is None:
            self._renew(conn, task_id, who, seconds)
            return ""
        if row[0] is not None:
            self._check_token(conn, task_id, caller)
            self._renew(conn, task_id, who, seconds)
            return caller.token
        conn.execute("UPDATE tasks SET claim_token = ? WHERE id = ?", (_digest(fresh), task_id))
        self._renew(conn, task_id, who, seconds)
        return fresh

    def heartbeat(
        self,
        task_id: str,
        assignee: str,
        lease: float = DEFAULT_LEASE,
        *,
        progress: Progress | None = None,
        caller: Caller | None = None,
    ) -> Task:
        """Renew the lease of a claim `assignee` holds: it ends `lease` seconds from now;
        `progress` (checked with `progress_of`) is kept as the step's progress so far.

        Refused when the claim is gone: its lease ran out first (the task is open again, or
        someone else's), or the task left in_progress; the worker should stop then. An MCP
        `caller` renews a claim made with task_claim only with its token.
        """
        task_id, seconds, who = _task_id(task_id), _lease(lease), _claimer(assignee, caller)

        def work(conn: Conn) -> None:
            before = self._progress(conn, task_id)
            if not self._renew(conn, task_id, who, seconds, caller, progress):
                self._refuse_heartbeat(conn, task_id, who, caller)
            if progress is not None and progress != before:  # news for the boards
                told = {"assignee": who, **dataclasses.asdict(progress)}
                self._event(conn, _now(), "progress", task_id, told)

        self._run(work, write=True, actor=_actor(caller))
        return self.get(task_id)

    def _renew(
        self,
        conn: Conn,
        task_id: str,
        who: str,
        seconds: float | None,
        caller: Caller | None = None,
        progress: Progress | None = None,
    ) -> bool:
        """Restart the lease of `who`'s claim on `task_id`, with its `progress` when told;
        False when `who` holds no claim (or, for an MCP `caller`, holds it under another
        token than the one presented)."""
        told = (
            ""
            if progress is None
            else ", progress_tokens = ?, progress_cost = ?, progress_tool = ?"
        )
        sql = (
            f"UPDATE tasks SET lease_until = {self.dialect.clock} + ?{told} "
            "WHERE id = ? AND status = 'in_progress' AND assignee = ?"
        )
        params: list[Any] = [seconds]
        if progress is not None:
            params += [progress.tokens, progress.cost, progress.last_tool]
        params += [task_id, who]
        if caller is not None:
            sql += " AND coalesce(claim_token, '') = ?"
            params.append(_digest(caller.token) if caller.token else "")
        return conn.execute(sql, params).rowcount == 1

    @staticmethod
    def _progress(conn: Conn, task_id: str) -> Progress | None:
        """The progress a heartbeat last told of `task_id`'s claim (None: none, or no task)."""
        row = conn.execute(
            f"SELECT {PROGRESS_COLUMNS} FROM tasks WHERE id = ?", (task_id,)
        ).fetchone()
        return None if row is None else stored(row)

    def _refuse_heartbeat(
        self, conn: Conn, task_id: str, who: str, caller: Caller | None = None
    ) -> None:
        """Explain why `who` holds no claim on `task_id` to renew."""
        status, holder = self._require(conn, task_id)[0], self._holder(conn, task_id)
        if caller is not None and status == "in_progress" and holder == who:
            self._check_token(conn, task_id, caller)
        row = conn.execute(
            "SELECT payload FROM events WHERE task = ? AND type = 'lease_expired' "
            "ORDER BY seq DESC LIMIT 1",
            (task_id,),
        ).fetchone()
        lapsed = json.loads(row[0]) if row is not None else {}
        ran_out = (
            f"{who}'s lease ran out at {lapsed.get('lease_until')}, so "
            if lapsed.get("assignee") == who
            else ""
        )
        now_held = f"claimed by {holder}" if status == "in_progress" and holder else status
        raise InvalidTaskError(
            f"{task_id} is {now_held}, not claimed by {who}: {ran_out}stop working on it"
            + (" (or claim it again)" if status == "open" else "")
        )

    @staticmethod
    def _holder(conn: Conn, task_id: str) -> str:
        row = conn.execute("SELECT assignee FROM tasks WHERE id = ?", (task_id,)).fetchone()
        return row[0] if row else ""

    def _refuse_claim(self, conn: Conn, task_id: str, who: str) -> NoReturn:
        """Explain why a claim matched no row (the claimer does not hold it either)."""
        row = conn.execute("SELECT status, assignee FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if row is None:
            self._require(conn, task_id)
        status, holder = row
        if holder and holder != who:
            raise InvalidTaskError(f"{task_id} is already claimed by {holder} ({status})")
        if status != "open":
            raise InvalidTaskError(
                f"{task_id} is {status}, not open: only an open task can be claimed"
            )
        waiting = [
            r[0]
            for r in conn.execute(
                "SELECT d.blocker FROM deps d JOIN tasks b ON b.id = d.blocker "
                "WHERE d.task = ? AND b.status <> 'done' ORDER BY d.blocker",
                (task_id,),
            )
        ]
        raise InvalidTaskError(
            f"{task_id} is not ready: it waits on {', '.join(waiting)}; claim a ready task"
        )

    def edit(
        self,
        task_id: str,
        title: str = "",
        body: str = "",
        parent: str = "",
        *,
        caller: Caller | None = None,
    ) -> None:
        """Revise title, body or parent; empty means unchanged, parent `-` detaches."""
        task_id = _task_id(task_id)
        new_title = _title(title) if title.strip() else ""
        new_body = _limited_text(body, "body", MAX_BODY_BYTES)
        parent = parent.strip()
        new_parent = "" if not parent or parent == DETACH_PARENT else _task_id(parent, "parent")
        if not (new_title or new_body or parent):
            raise InvalidTaskError(
                f"nothing to edit: give title, body or parent ({DETACH_PARENT!r} detaches)"
            )

        def work(conn: Conn) -> None:
            _, old_title, old_parent = self._require(conn, task_id)
            now = _now()
            payload: dict[str, Any] = {}
            if new_title and new_title != old_title:
                conn.execute("UPDATE tasks SET title = ? WHERE id = ?", (new_title, task_id))
                payload["title"] = new_title
            if new_body:
                conn.execute("UPDATE tasks SET body = ? WHERE id = ?", (new_body, task_id))
                payload["body"] = True  # the text itself stays in the task; read it there
            if parent == DETACH_PARENT and old_parent is not None:
                conn.execute("UPDATE tasks SET parent = NULL WHERE id = ?", (task_id,))
                payload["parent"] = ""
            elif new_parent and new_parent != old_parent:
                self._require(conn, new_parent)
                self._check_parent_cycle(conn, task_id, new_parent)
                self._check_depth(conn, new_parent, self._height(conn, task_id))
                conn.execute("UPDATE tasks SET parent = ? WHERE id = ?", (new_parent, task_id))
                payload["parent"] = new_parent
            if payload:
                conn.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (now, task_id))
                self._event(conn, now, "edited", task_id, payload)

        self._run(work, write=True, actor=_actor(caller))

    @staticmethod
    def _check_depth(conn: Conn, parent: str, levels: int) -> None:
        """Refuse to hang `levels` levels of tasks under `parent` past MAX_DEPTH levels."""
        (depth,) = conn.execute(
            """
            WITH RECURSIVE up(id, depth) AS (
                SELECT CAST(? AS TEXT), 1 UNION ALL
                SELECT t.parent, up.depth + 1 FROM tasks t JOIN up ON t.id = up.id
                WHERE t.parent IS NOT NULL AND up.depth <= ?)
            SELECT max(depth) FROM up
            """,
            (parent, MAX_DEPTH),
        ).fetchone()
        if depth + levels > MAX_DEPTH:
            raise InvalidTaskError(
                f"refused: {parent} is {depth} levels deep, and a parent chain may be at most "
                f"{MAX_DEPTH} levels; put the task under a goal nearer the top"
            )

    @staticmethod
    def _height(conn: Conn, task_id: str) -> int:
        """Levels in the subtree of `task_id` (1 for a task without children), up to MAX_DEPTH + 1."""
        (height,) = conn.execute(
            """
            WITH RECURSIVE sub(id, depth) AS (
                SELECT CAST(? AS TEXT), 1 UNION ALL
                SELECT c.id, sub.depth + 1 FROM tasks c JOIN sub ON c.parent = sub.id
                WHERE sub.depth <= ?)
            SELECT max(depth) FROM sub
            """,
            (task_id, MAX_DEPTH),
        ).fetchone()
        return int(height)

    @staticmethod
    def _check_parent_cycle(conn: Conn, task_id: str, new_parent: str) -> None:
        if new_parent == task_id:
            raise CycleError(f"{task_id} cannot be its own parent")
        row = conn.execute(
            """
            WITH RECURSIVE up(id) AS (
                SELECT CAST(? AS TEXT) UNION SELECT t.parent FROM tasks t JOIN up ON t.id = up.id
                WHERE t.parent IS NOT NULL)
            SELECT 1 FROM up WHERE id = ?
            """,
            (new_parent, task_id),
        ).fetchone()
        if row is not None:
            raise CycleError(
                f"refused: {new_parent} is inside the subtree of {task_id}, "
                "so making it the parent would create a loop"
            )

    def delete(
        self, task_id: str, recursive: bool = False, *, caller: Caller | None = None
    ) -> list[str]:
        """Delete a task (with its subtree when `recursive`) and its edges; return deleted ids."""
        task_id = _task_id(task_id)

        def work(conn: Conn) -> list[str]:
            self._require(conn, task_id)
            subtree = conn.execute(
                """
                WITH RECURSIVE sub(id, depth) AS (
                    SELECT CAST(? AS TEXT), 0 UNION ALL
                    SELECT t.id, sub.depth + 1 FROM tasks t JOIN sub ON t.parent = sub.id)
                SELECT sub.id, sub.depth, t.title, coalesce(t.parent, ''), t.status
                FROM sub JOIN tasks t ON t.id = sub.id ORDER BY sub.depth DESC, sub.id
                """,
                (task_id,),
            ).fetchall()
            doomed = {row[0] for row in subtree}
            if len(subtree) > 1 and not recursive:
                children = sorted(row[0] for row in subtree if row[1] == 1)
                shown = ", ".join(children[:10]) + (", ..." if len(children) > 10 else "")
                raise InvalidTaskError(
                    f"{task_id} has {plural(len(children), 'child task')} ({shown}): delete them first "
                    "or delete with recursive=true"
                )
            now = _now()
            # Outside tasks still waiting on a doomed, unfinished blocker may become ready.
            candidates: set[str] = set()
            for doomed_id, _, title, parent, _status_ in subtree:
                blockers = [
                    r[0]
                    for r in conn.execute(
                        "SELECT blocker FROM deps WHERE task = ? ORDER BY blocker", (doomed_id,)
                    )
                ]
                dependents = [
                    r[0]
                    for r in conn.execute(
                        "SELECT task FROM deps WHERE blocker = ? ORDER BY task", (doomed_id,)
                    )
                ]
                if _status_ != "done":
                    candidates.update(d for d in dependents if d not in doomed)
                for table in ("deps", "labels", "notes"):
                    conn.execute(f"DELETE FROM {table} WHERE task = ?", (doomed_id,))
                conn.execute("DELETE FROM deps WHERE blocker = ?", (doomed_id,))
                conn.execute("DELETE FROM tasks WHERE id = ?", (doomed_id,))
                payload = {
                    "title": title,
                    "parent": parent,
                    "blockers": blockers,
                    "dependents": dependents,
                }
                self._event(conn, now, "deleted", doomed_id, payload)
            self._emit_unblocked(conn, now, sorted(candidates), task_id, "deleted")
            return [row[0] for row in subtree]

        return self._run(work, write=True, actor=_actor(caller))

    def add_dep(self, task_id: str, blocker: str, *, caller: Caller | None = None) -> bool:
        """Make `blocker` block `task_id`; False when that edge already existed."""
        task_id = _task_id(task_id)
        blocker = _task_id(blocker, "blocker")
        if task_id == blocker:
            raise CycleError(f"{task_id} cannot block itself")

        def work(conn: Conn) -> bool:
            self._require(conn, task_id)
            self._require(conn, blocker)
            if conn.execute(
                "SELECT 1 FROM deps WHERE task = ? AND blocker = ?", (task_id, blocker)
            ).fetchone():
                return False
            # Would `blocker` (transitively) wait on `task_id`? Then the edge closes a loop.
            loop = conn.execute(
                """
                WITH RECURSIVE up(id) AS (
                    SELECT blocker FROM deps WHERE task = ?
                    UNION SELECT d.blocker FROM deps d JOIN up ON d.task = up.id)
                SELECT 1 FROM up WHERE id = ? LIMIT 1
                """,
                (blocker, task_id),
            ).fetchone()
            if loop is not None:
                raise CycleError(
                    f"refused: {blocker} already waits on {task_id} (directly or through other "
                    f"tasks), so {blocker} blocking {task_id} would be a cycle"
                )
            conn.execute("INSERT INTO deps (task, blocker) VALUES (?, ?)", (task_id, blocker))
            now = _now()
            conn.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (now, task_id))
            self._event(conn, now, "dep_added", task_id, {"blocker": blocker})
            return True

        return self._run(work, write=True, actor=_actor(caller))

    def remove_dep(
        self, task_id: str, blocker: str, *, caller: Caller | None = None
    ) -> tuple[TaskRef, ...]:
        """Remove the edge `blocker` -> `task_id`; return `task_id` if that made it unblocked."""
        task_id = _task_id(task_id)
        blocker = _task_id(blocker, "blocker")

        def work(conn: Conn) -> tuple[TaskRef, ...]:
            self._require(conn, task_id)
            blocker_status = self._require(conn, blocker)[0]
            cursor = conn.execute(
                "DELETE FROM deps WHERE task = ? AND blocker = ?", (task_id, blocker)
            )
            if cursor.rowcount == 0:
                raise InvalidTaskError(f"{task_id} is not blocked by {blocker}; nothing to remove")
            now = _now()
            conn.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (now, task_id))
            self._event(conn, now, "dep_removed", task_id, {"blocker": blocker})
            if blocker_status == "done":
                return ()
            return self._emit_unblocked(conn, now, [task_id], blocker, "dep_removed")

        return self._run(work, write=True, actor=_actor(caller))

    # --- reads -------------------------------------------------------------------------------

    def ref(self, task_id: str) -> TaskRef:
        """One task's id, status and title: one row read (what a change's answer names)."""
        task_id = _task_id(task_id)

        def work(conn: Conn) -> TaskRef:
            row = self._require(conn, task_id)
            return TaskRef(task_id, row[0], row[1])

        return self._run(work, write=False)

    # long: one task from six small queries, each a few lines; split, they would only be
    # named after their table
    def get(self, task_id: str, *, notes: int | None = None, notes_before: int = 0) -> Task:
        """Return one task with its notes, blockers, dependents and children.

        `notes` bounds how many notes come back: the newest ones, or the newest before
        note number `notes_before` (1 = the oldest); None returns them all.
        """
        task_id = _task_id(task_id)
        if notes is not None and notes < 1:
            raise InvalidTaskError("notes must be 1 or more")
        if notes_before < 0:
            raise InvalidTaskError("notes_before must be a note number (1 = the oldest) or 0")

        def work(conn: Conn) -> Task:
            row = conn.execute(
                "SELECT id, title, body, status, parent, assignee, created_at, updated_at, "
                f"coalesce(closed_at, ''), lease_until, {PROGRESS_COLUMNS} FROM tasks WHERE id = ?",
                (task_id,),
            ).fetchone()
            if row is None:
                self._require(conn, task_id)  # raises with the standard message
            parent = None
            if row[4] is not None:
                parent = _refs(conn, "SELECT id, status, title FROM tasks WHERE id = ?", (row[4],))[
                    0
                ]
            blockers = _refs(
                conn,
                "SELECT t.id, t.status, t.title FROM deps d JOIN tasks t ON t.id = d.blocker "
                "WHERE d.task = ? ORDER BY t.rowid",
                (task_id,),
            )
            dependents = _refs(
                conn,
                "SELECT t.id, t.status, t.title FROM deps d JOIN tasks t ON t.id = d.task "
                "WHERE d.blocker = ? ORDER BY t.rowid",
                (task_id,),
            )
            children = _refs(
                conn,
                "SELECT id, status, title FROM tasks WHERE parent = ? ORDER BY rowid",
                (task_id,),
            )
            label_rows = conn.execute(
                "SELECT label, setter FROM labels WHERE task = ? ORDER BY label", (task_id,)
            ).fetchall()
            labels = tuple(r[0] for r in label_rows)
            labels_by = {r[0]: r[1] for r in label_rows if r[1]}
            total, start, note_rows = self._notes(conn, task_id, notes, notes_before)
            status = row[3]
            return Task(
                id=row[0],
                title=row[1],
                body=row[2],
                status=status,
                ready=status == "open" and all(b.status == "done" for b in blockers),
                parent=parent,
                assignee=row[5],
                labels=labels,
                notes=note_rows,
                blockers=blockers,
                dependents=dependents,
                children=children,
                created_at=row[6],
                updated_at=row[7],
                closed_at=row[8],
                lease_until=_epoch_iso(row[9]),
                notes_total=total,
                notes_start=start,
                labels_by=labels_by,
                progress=stored(row[10:13]),
            )

        return self._run(work, write=False)

    @staticmethod
    def _notes(
        conn: Conn, task_id: str, limit: int | None, before: int
    ) -> tuple[int, int, tuple[Note, ...]]:
        """(count of all notes, number of the first returned, the notes): the newest
        `limit` before note number `before` (0: the end), oldest first."""
        (total,) = conn.execute("SELECT count(*) FROM notes WHERE task = ?", (task_id,)).fetchone()
        end = total if before == 0 else min(before - 1, total)
        start = 0 if limit is None else max(0, end - limit)
        rows = conn.execute(
            "SELECT time, text FROM notes WHERE task = ? ORDER BY id LIMIT ? OFFSET ?",
            (task_id, end - start, start),
        )
        return int(total), start + 1, tuple(Note(*r) for r in rows)

    def list(
        self,
        status: str = "open",
        parent: str = "",
        label: str = "",
        ids: Iterable[str] = (),
        *,
        edges: bool = True,
        bodies: bool = False,
        setters: bool = False,
        progress: bool = False,
    ) -> list[TaskSummary]:
        """List tasks in creation order, filtered by status (or `ready` / `all`), parent,
        label and ids (unknown ids are left out). `edges=False` leaves each task's labels
        and blockers empty, for a listing that does not show them (about twice as fast);
        `bodies=True` reads each task's body too (else it is ''); `setters=True` reads
        who set each label (`labels_by`), and `progress=True` what each holder's heartbeat
        told, each in one more query."""
        status = _status(status, LIST_FILTERS) if status.strip() else "open"
        parent_id = _task_id(parent, "parent") if parent.strip() else ""
        label = label.strip()
        id_list = _unique_ids(ids, "id")
        if len(id_list) > MAX_IDS:
            raise InvalidTaskError(f"{len(id_list)} ids given, the limit is {MAX_IDS} per call")
        condition, params = self._list_where(status, parent_id, label, id_list)
        d = self.dialect
        if not edges:
            select = d.bare_summaries
        else:
            select = d.ready_summaries if status == "ready" else d.summaries
        if bodies:
            select = select.replace(_NO_BODY, "t.body")
        sql = select + condition + " ORDER BY t.rowid"

        def work(conn: Conn) -> list[TaskSummary]:
            if parent_id:
                self._require(conn, parent_id)
            found = [_summary(row) for row in conn.execute(sql, params)]
            if setters:
                found = _with_setters(conn, found, condition, params)
            if progress:
                told = progress_by_task(conn, condition, params)
                found = [t._replace(progress=told[t.id]) if t.id in told else t for t in found]
            return found

        return self._run(work, write=False)

    def _list_where(
        self, status: str, parent_id: str, label: str, id_list: Sequence[str]
    ) -> tuple[str, builtins.list[Any]]:
        """The WHERE clause of a listing (or '') and its parameters."""
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if id_list:
            where.append("t.id IN (" + ", ".join("?" * len(id_list)) + ")")
            params.extend(id_list)
        if status == "ready":
            where.append("t.status = 'open' AND NOT " + self.dialect.blocked)
        elif status != "all":
            where.append("t.status = ?")
            params.append(status)
        if parent_id:
            where.append("t.parent = ?")
            params.append(parent_id)
        if label:
            where.append("EXISTS (SELECT 1 FROM labels l WHERE l.task = t.id AND l.label = ?)")
            params.append(label)
        return (" WHERE " + " AND ".join(where) if where else ""), params

    # `builtins.list` below: in the class body `list` names the method above.
    def ready(self) -> builtins.list[TaskSummary]:
        """Open tasks whose blockers are all done: the work that can start now."""
        return self.list(status="ready")

    def tree(self, root: str = "") -> builtins.list[TaskNode]:
        """The task forest (or the subtree under `root`), children in creation order."""
        root_id = _task_id(root) if root.strip() else ""

        def work(conn: Conn) -> list[TaskSummary]:
            if not root_id:
                return [
                    _summary(r) for r in conn.execute(self.dialect.summaries + " ORDER BY t.rowid")
                ]
            self._require(conn, root_id)
            sql = (
                self.dialect.summaries
                + """
                WHERE t.id IN (
                    WITH RECURSIVE sub(id) AS (
                        SELECT CAST(? AS TEXT) UNION ALL SELECT c.id FROM tasks c JOIN sub ON c.parent = sub.id)
                    SELECT id FROM sub)
                ORDER BY t.rowid
                """
            )
            return [_summary(r) for r in conn.execute(sql, (root_id,))]

        summaries = self._run(work, write=False)
        ids = {s.id for s in summaries}
        kids: dict[str, list[TaskSummary]] = {}
        tops: list[TaskSummary] = []
        for s in summaries:
            if s.id == root_id or (not root_id and s.parent not in ids):
                tops.append(s)
            else:
                kids.setdefault(s.parent, []).append(s)

        return [_build_tree(top, kids) for top in tops]

    def events(
        self, since: int = 0, limit: int = 100, *, newest: bool = False
    ) -> builtins.list[Event]:
        """Events with seq greater than `since`, oldest first, at most `limit` of them: the
        oldest such, or with `newest` the newest (read from the log's end, not paged to)."""
        if since < 0:
            raise InvalidTaskError("since must be 0 or a seq from an earlier event")
        if limit < 1:
            raise InvalidTaskError(f"limit must be between 1 and {MAX_EVENTS_PAGE}")
        limit = min(limit, MAX_EVENTS_PAGE)

        def work(conn: Conn) -> list[Event]:
            order = "DESC" if newest else ""
            rows = conn.execute(
                "SELECT seq, time, type, task, payload FROM events WHERE seq > ? "
                f"ORDER BY seq {order} LIMIT ?",
                (since, limit),
            ).fetchall()
            events = [Event(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows]
            return events[::-1] if newest else events

        return self._run(work, write=False)

    def last_seq(self) -> int:
        """The seq of the newest event, 0 when there is none; cheap enough to poll."""
        return self._run(
            lambda conn: int(
                conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
            ),
            write=False,
        )


def _build_tree(top: TaskSummary, kids: dict[str, list[TaskSummary]]) -> TaskNode:
    """The TaskNode of `top` and its descendants, built leaves first without recursion
    (a store may hold chains deeper than Python's recursion limit)."""
    order: list[TaskSummary] = []
    stack = [top]
    while stack:
        summary = stack.pop()
        order.append(summary)
        stack.extend(kids.get(summary.id, ()))
    built: dict[str, TaskNode] = {}
    for summary in reversed(order):  # every child comes after its parent in `order`
        children = tuple(built.pop(c.id) for c in kids.get(summary.id, ()))
        built[summary.id] = TaskNode(summary, children)
    return built[top.id]
