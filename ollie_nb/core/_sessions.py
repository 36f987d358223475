"""Saved sessions: one JSON Lines log each (mode 0600) under the user data dir, sortable ids.

`SavedSession` is a session's data as types; JSON is read and written at the file edge only
(`_session_log` holds the file's layout).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from ollie_nb.core._history import UsageTotals
from ollie_nb.core._session_log import LogRead, SessionLog, read_listing, read_log
from ollie_nb.errors import SessionError
from ollie_nb.llm import Message
from ollie_nb.planning import PlanDraft, PlanKind, PlanRecord, PlanStep, Review, format_plan

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def sessions_dir() -> Path:
    """`$OLLIE_DATA_DIR/sessions`, else the platform's user data dir for ollie_nb."""
    base = os.environ.get("OLLIE_DATA_DIR")
    if not base:
        import platformdirs

        base = platformdirs.user_data_dir("ollie_nb", appauthor=False)
    return Path(base) / "sessions"


def new_session_id(now: float | None = None) -> str:
    """A time-sortable id: `20261129-201534-k3f9` (UTC, then random base32)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now or time.time()))
    alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
    return f"{stamp}-{''.join(secrets.choice(alphabet) for _ in range(4))}"


@dataclass(frozen=True)
class SessionInfo:
    """A saved session as listed: id, name, when, how long, how it began."""

    id: str
    name: str
    updated: float
    messages: int
    first_prompt: str
    path: Path


def save_session(
    session: SavedSession,
    directory: Path | None = None,
    redact: Callable[[str], str] | None = None,
) -> Path:
    """Write a session as a new log (header and snapshot), atomically with mode 0600 (the
    file may hold private conversation text); `redact` gets every string before encoding."""
    directory = directory or sessions_dir()
    path = session_path(directory, session.id)
    make_private_dir(directory)
    log = SessionLog()
    log.save(path, session.name, session.fields(), session.history, session.children, redact)
    return path


@dataclass(frozen=True)
class LoadedSession:
    """A session read from its file, with where its log stands (to append to it)."""

    session: SavedSession
    path: Path
    read: LogRead


def read_session(key: str, directory: Path | None = None) -> LoadedSession:
    """Read a session by id (or unique id prefix, or name); corrupt files raise SessionError."""
    path = _find(key, directory or sessions_dir())
    read = read_log(path)
    return LoadedSession(SavedSession.decode(_checked(path, read.data), key), path, read)


def load_session(key: str, directory: Path | None = None) -> SavedSession:
    """A saved session by id (or unique id prefix, or name)."""
    return read_session(key, directory).session


def list_sessions(directory: Path | None = None) -> list[SessionInfo]:
    """Saved sessions, newest first, from each file's header and last line (a file of the
    first format is read whole); unreadable files are skipped."""
    directory = directory or sessions_dir()
    infos = []
    for path in sorted(directory.glob("*.json"), reverse=True):
        try:
            summary = read_listing(path)
        except (SessionError, OSError):
            continue
        if valid_session_id(summary.id):
            infos.append(
                SessionInfo(
                    id=str(summary.id),
                    name=summary.name,
                    updated=summary.updated,
                    messages=summary.messages,
                    first_prompt=summary.first_prompt,
                    path=path,
                )
            )
    return infos


def valid_session_id(session_id: Any) -> bool:
    """Whether `session_id` can name a session file (no path parts, no glob, no dot start)."""
    return isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id) is not None


def session_path(directory: Path, session_id: Any) -> Path:
    """The file of a session; a SessionError for an id that could point anywhere else."""
    if not valid_session_id(session_id):
        raise SessionError(f"invalid session id {str(session_id)[:80]!r}")
    path = (directory / f"{session_id}.json").resolve()
    if path.parent != directory.resolve():
        raise SessionError(f"invalid session id {session_id!r}")
    return path


def make_private_dir(directory: Path) -> None:
    """Create `directory` (and parents) readable by its owner only, when it is new."""
    if not directory.is_dir():
        directory.mkdir(parents=True, mode=0o700, exist_ok=True)
        os.chmod(directory, 0o700)  # mkdir's mode is masked by the umask


def _find(key: str, directory: Path) -> Path:
    if valid_session_id(key):
        exact = directory / f"{key}.json"
        if exact.exists():
            return exact
    files = sorted(directory.glob("*.json")) if directory.exists() else []
    matches = [p for p in files if valid_session_id(key) and p.stem.startswith(key)]
    if not matches and directory.exists():
        matches = [info.path for info in list_sessions(directory) if info.name == key]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionError(f"no saved session {key!r} in {directory}")
    raise SessionError(f"{key!r} matches {len(matches)} sessions; give more of the id")


def _checked(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    if "id" not in data or not isinstance(data.get("history", []), list):
        raise SessionError(f"{path}: not an ollie_nb session (no id or history)")
    if not valid_session_id(data["id"]):
        raise SessionError(f"{path}: invalid session id {str(data['id'])[:80]!r}")
    return data


def plan_to_dict(record: PlanRecord) -> dict[str, Any]:
    """A plan as session JSON (its text is rebuilt on load, so it is not stored)."""
    return {
        "number": record.number,
        "goal": record.goal,
        "steps": [{"title": s.title, "body": s.body, "after": list(s.after)} for s in record.steps],
        "ids": list(record.ids),
        "goal_id": record.goal_id,
        "status": record.status,
        "backend": record.backend,
        "warning": record.warning,
        "created": record.created,
        "kind": record.kind,
        **({"review": record.review.value} if record.review else {}),
    }


def plan_from_dict(data: Mapping[str, Any]) -> PlanRecord:
    """A plan from session JSON; sessions saved before plans had a kind get it from their ids."""
    steps = tuple(
        PlanStep(s["title"], s.get("body", ""), tuple(s.get("after", ()))) for s in data["steps"]
    )
    ids = tuple(data.get("ids", ()))
    status = data.get("status", "")
    goal_id = data.get("goal_id", "")
    kind = data.get("kind") or _legacy_kind(ids, goal_id, data.get("backend", ""))
    if kind not in get_args(PlanKind):
        raise ValueError(f"unknown plan kind {kind!r}")
    return PlanRecord(
        number=int(data["number"]),
        goal=data["goal"],
        steps=steps,
        ids=ids,
        goal_id=goal_id,
        status=status,
        backend=data.get("backend", ""),
        warning=data.get("warning", ""),
        text=format_plan(data["goal"], steps, ids or None, status, goal_id),
        created=float(data.get("created", 0)),
        kind=kind,
        review=Review(data["review"]) if data.get("review") else None,
    )


def drafts_to_dict(drafts: Mapping[int, PlanDraft]) -> dict[str, Any]:
    """The held plans' drafts as session JSON, by plan number."""
    return {str(number): draft.to_dict() for number, draft in drafts.items()}


def drafts_from_dict(data: Any) -> dict[int, PlanDraft]:
    """The held plans' drafts from session JSON (ValueError when malformed)."""
    if not isinstance(data, Mapping):
        raise ValueError("'drafts' must be an object of plan number -> draft")
    return {int(number): PlanDraft.from_dict(d) for number, d in data.items()}


def _legacy_kind(ids: Sequence[str], goal_id: str, backend: str) -> PlanKind:
    if not ids:
        return "context"
    if goal_id or backend.startswith("task server"):
        return "tasks"
    return "queue" if backend == "the prompt queue" else "custom"


@dataclass(frozen=True)
class SavedSession:
    """A saved session: its conversation, plans, sub-agents and the agent it used."""

    id: str
    history: list[Message] = field(default_factory=list)
    name: str = ""
    created: float = 0.0
    updated: float = 0.0
    agent: str = ""  # the agent config's name and path, to switch back to on resume
    agent_path: str = ""
    backend: str = ""
    model: str = ""
    workdir: str = ""
    usage: UsageTotals = field(default_factory=UsageTotals)
    plans: tuple[PlanRecord, ...] = ()
    errors: tuple[dict[str, Any], ...] = ()  # failed model calls, kept out of the history
    subagents: tuple[dict[str, Any], ...] = ()  # each child's name, step, turns, reply
    children: Mapping[str, list[Message]] = field(default_factory=dict)  # their histories
    runs: tuple[int, ...] = ()  # plans being worked in parallel
    drafts: Mapping[int, PlanDraft] = field(default_factory=dict)  # of held plans

    @property
    def last_reply(self) -> str:
        """The last assistant message with text ('' when none)."""
        replies = (m.content for m in reversed(self.history) if m.role == "assistant")
        return next((text for text in replies if text), "")

    def fields(self) -> dict[str, Any]:
        """Every field but the history as JSON data (a log appends the history apart)."""
        return {
            "id": self.id,
            "name": self.name,
            "created": self.created,
            "agent": self.agent,
            "agent_path": self.agent_path,
            "backend": self.backend,
            "model": self.model,
            "workdir": self.workdir,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "requests": self.usage.requests,
            },
            "plans": [plan_to_dict(p) for p in self.plans],
            "errors": [dict(e) for e in self.errors],
            "subagents": [dict(s) for s in self.subagents],
            "runs": list(self.runs),
            "drafts": drafts_to_dict(self.drafts),
        }

    @classmethod
    def decode(cls, data: Mapping[str, Any], key: str) -> SavedSession:
        """Decode a session's JSON data; malformed content is a SessionError naming it."""
        try:
            return cls._decode(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SessionError(f"session {key}: malformed content ({exc})") from None

    @classmethod
    def _decode(cls, data: Mapping[str, Any]) -> SavedSession:
        usage = data.get("usage") or {}
        return cls(
            id=str(data["id"]),
            history=[Message.from_dict(m) for m in data["history"]],
            name=str(data.get("name", "")),
            created=float(data.get("created", time.time())),
            updated=float(data.get("updated") or 0),
            agent=str(data.get("agent") or ""),
            agent_path=str(data.get("agent_path") or ""),
            backend=str(data.get("backend") or ""),
            model=str(data.get("model") or ""),
            workdir=str(data.get("workdir") or ""),
            usage=UsageTotals(
                int(usage.get("input_tokens", 0)),
                int(usage.get("output_tokens", 0)),
                int(usage.get("requests", 0)),
            ),
            plans=tuple(plan_from_dict(p) for p in data.get("plans", [])),
            errors=tuple(dict(e) for e in data.get("errors", ())),
            subagents=tuple(
                {k: v for k, v in s.items() if k != "history"} for s in data.get("subagents") or ()
            ),
            children=_children(data),
            runs=tuple(n for n in data.get("runs") or () if isinstance(n, int)),
            drafts=drafts_from_dict(data.get("drafts") or {}),
        )


def _children(data: Mapping[str, Any]) -> dict[str, list[Message]]:
    """The sub-agents' histories: a log keeps them apart, the first format in each child."""
    kept = data.get("children")
    if kept is None:
        kept = {s["name"]: s.get("history", []) for s in data.get("subagents") or ()}
    return {str(name): [Message.from_dict(m) for m in history] for name, history in kept.items()}
