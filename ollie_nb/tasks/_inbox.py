"""The inbox: what waits on a person (an approval, a plan to review, a reached cap), kept in
the task store so every client of the store sees it and any process can wait on its answer."""

from __future__ import annotations

import builtins
import dataclasses
import math
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ollie_nb.tasks._errors import InvalidTaskError, UnknownTaskError
from ollie_nb.tasks._store import (
    MAX_IDS,
    Caller,
    Conn,
    SqlTaskStore,
    _assignee,
    _epoch_iso,
    _now,
    _plain,
    _task_id,
    _unique_ids,
)

KINDS: tuple[str, ...] = ("approval", "plan_review", "cap")
"""What a request asks: a tool call's approval, a plan's review, a reached cap's raise."""

INBOX_FILTERS: tuple[str, ...] = ("open", "answered", "expired", "all")
"""What `Inbox.list(state=...)` accepts: a request's state, or all of them."""

MAX_WHAT_CHARS = 2000
"""How long a request's text may be: a short line or two, the call's arguments masked."""

DEFAULT_ASK_TIMEOUT = 300.0
"""Seconds a request stays open when the asker names no timeout."""

MAX_ASK_TIMEOUT = 7 * 24 * 3600.0
"""The longest a request may stay open (a week)."""

INBOX_PAGE = 100
"""How many requests one listing returns at most; `next` reads on."""

INBOX_PREFIX = "q-"
_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_AMOUNT = re.compile(r"\d+(\.\d+)?")

_COLUMNS = (
    "id, kind, goal, step, asker, what, created_at, deadline, "
    "coalesce(answer, ''), coalesce(answered_by, ''), coalesce(answered_at, '')"
)


@dataclass(frozen=True)
class InboxRow:
    """One request of the inbox; `answer` is '' while it is open, and `state` says where it
    stands by the store's clock: open, answered, or expired (taken as denied)."""

    id: str
    kind: str
    goal: str
    step: str
    asker: str
    what: str
    created_at: str
    deadline: str
    answer: str
    answered_by: str
    answered_at: str
    state: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form."""
        return dataclasses.asdict(self)


def _state_sql(clock: str) -> str:
    """SQL naming a row's state by the store's clock."""
    return (
        "CASE WHEN answer IS NOT NULL THEN 'answered' "
        f"WHEN deadline <= {clock} THEN 'expired' ELSE 'open' END"
    )


def _row(raw: Sequence[Any]) -> InboxRow:
    values = list(raw)
    values[7] = _epoch_iso(values[7])
    return InboxRow(*values)


def _kind(raw: str) -> str:
    kind = raw.strip().lower() if isinstance(raw, str) else ""
    if kind not in KINDS:
        raise InvalidTaskError(f"bad kind {raw!r}: use one of {', '.join(KINDS)}")
    return kind


def _what(raw: str) -> str:
    what = _plain(raw, "what").strip() if isinstance(raw, str) else ""
    if not what:
        raise InvalidTaskError("what is empty: say in a line what waits on an answer")
    if len(what) > MAX_WHAT_CHARS:
        raise InvalidTaskError(
            f"what is {len(what)} characters, the limit is {MAX_WHAT_CHARS}: shorten it"
        )
    return what


def _timeout(raw: float) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise InvalidTaskError(f"timeout must be a number of seconds, not {raw!r}")
    if not 0 < raw <= MAX_ASK_TIMEOUT:
        raise InvalidTaskError(f"timeout is {raw:g} s: give 1 to {MAX_ASK_TIMEOUT:g} seconds")
    return float(raw)


def parse_answer(raw: str) -> str:
    """An answer as stored: allow, deny, stop or raise:<amount> (InvalidTaskError if not)."""
    answer = raw.strip().lower() if isinstance(raw, str) else ""
    if answer in ("allow", "deny", "stop"):
        return answer
    amount = answer.removeprefix("raise:")
    if answer.startswith("raise:") and _AMOUNT.fullmatch(amount) and float(amount) > 0:
        return answer
    raise InvalidTaskError(f"bad answer {raw!r}: use allow, deny, stop or raise:<amount>")


def _named(raw: str, caller: Caller | None, what: str) -> str:
    """Who asks or answers: the name given; over HTTP with named users, the caller's own."""
    name = _assignee(raw)
    user = caller.user if caller is not None else ""
    if user and name not in ("", user):
        raise InvalidTaskError(f"you are {user} on this server: {what} as {user}, not {name}")
    return name or user


class Inbox:
    """The inbox of one task store: ask, list, answer; each change logs its event
    (`inbox.asked`, `inbox.answered`) so watchers of the event log see it."""

    def __init__(self, store: SqlTaskStore) -> None:
        self.store = store

    def ask(
        self,
        kind: str,
        what: str,
        asker: str,
        *,
        goal: str = "",
        step: str = "",
        timeout: float = DEFAULT_ASK_TIMEOUT,
        caller: Caller | None = None,
    ) -> str:
        """Open a request and return its id; it is denied unless answered within `timeout` s."""
        kind, what, seconds = _kind(kind), _what(what), _timeout(timeout)
        who = _named(asker, caller, "ask")
        if not who:
            raise InvalidTaskError("asker is empty: say who asks (a worker's or agent's name)")
        goal = _task_id(goal, "goal") if goal.strip() else ""
        step = _task_id(step, "step") if step.strip() else ""
        store = self.store

        def work(conn: Conn) -> str:
            for task_id in (t for t in (goal, step) if t):
                store._require(conn, task_id)
            request = INBOX_PREFIX + "".join(secrets.choice(_ID_ALPHABET) for _ in range(6))
            now = _now()
            conn.execute(
                "INSERT INTO inbox (id, kind, goal, step, asker, what, created_at, deadline) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, {store.dialect.clock} + ?)",
                (request, kind, goal, step, who, what, now, seconds),
            )
            payload = {"inbox": request, "kind": kind, "asker": who, "goal": goal, "step": step}
            store._event(conn, now, "inbox.asked", step or goal, payload)
            return request

        return store._run(work, write=True, actor=caller.user if caller else "")

    def list(
        self, state: str = "open", ids: Iterable[str] = (), *, start: int = 0
    ) -> tuple[builtins.list[InboxRow], bool]:
        """Requests in `state` (or `ids`), oldest first, at most INBOX_PAGE from `start`;
        and whether more follow."""
        state = state.strip().lower()
        if state not in INBOX_FILTERS:
            raise InvalidTaskError(f"bad state {state!r}: use one of {', '.join(INBOX_FILTERS)}")
        wanted = _unique_ids(ids, "id")
        if len(wanted) > MAX_IDS:
            raise InvalidTaskError(f"{len(wanted)} ids given, the limit is {MAX_IDS}")
        states = _state_sql(self.store.dialect.clock)
        where, params = ("", []) if state == "all" else (f" WHERE ({states}) = ?", [state])
        if wanted:
            marks = ", ".join("?" * len(wanted))
            where += (" AND" if where else " WHERE") + f" id IN ({marks})"
            params += wanted
        sql = f"SELECT {_COLUMNS}, {states} FROM inbox{where} ORDER BY rowid LIMIT ? OFFSET ?"

        def work(conn: Conn) -> builtins.list[InboxRow]:
            return [_row(r) for r in conn.execute(sql, (*params, INBOX_PAGE + 1, start))]

        rows = self.store._run(work, write=False)
        return rows[:INBOX_PAGE], len(rows) > INBOX_PAGE

    def answer(
        self, request: str, answer: str, by: str = "", *, caller: Caller | None = None
    ) -> InboxRow:
        """Answer an open request once, recording who; refused when answered or expired."""
        request, answer = _task_id(request, "id"), parse_answer(answer)
        who = _named(by, caller, "answer")
        store = self.store
        states = _state_sql(store.dialect.clock)

        def work(conn: Conn) -> InboxRow:
            now = _now()
            changed = conn.execute(
                "UPDATE inbox SET answer = ?, answered_by = ?, answered_at = ? "
                f"WHERE id = ? AND answer IS NULL AND deadline > {store.dialect.clock}",
                (answer, who, now, request),
            ).rowcount
            raw = conn.execute(
                f"SELECT {_COLUMNS}, {states} FROM inbox WHERE id = ?", (request,)
            ).fetchone()
            if raw is None:
                raise UnknownTaskError(f"no inbox request {request!r} (list the inbox for ids)")
            row = _row(raw)
            if changed != 1:
                _refuse_answer(row)
            payload = {"inbox": request, "answer": answer, "answered_by": who}
            store._event(conn, now, "inbox.answered", row.step or row.goal, payload)
            return row

        return store._run(work, write=True, actor=caller.user if caller else "")


def _refuse_answer(row: InboxRow) -> None:
    """Say why `row` takes no answer: answered already, or timed out (taken as denied)."""
    if row.state == "answered":
        by = f" by {row.answered_by}" if row.answered_by else ""
        raise InvalidTaskError(
            f"{row.id} was answered already{by} at {row.answered_at}: {row.answer}"
        )
    raise InvalidTaskError(
        f"{row.id} timed out at {row.deadline} and was taken as denied: ask again"
    )
