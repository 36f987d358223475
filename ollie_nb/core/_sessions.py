"""Saved sessions: one JSON file each (mode 0600) under the user data dir, with sortable ids."""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from ollie_nb.core._history import UsageTotals
from ollie_nb.errors import SessionError
from ollie_nb.llm import Message
from ollie_nb.planning import PlanDraft, PlanKind, PlanRecord, PlanStep, Review, format_plan
from ollie_nb.redaction import redact_data

if TYPE_CHECKING:
    from ollie_nb.core._config import AgentConfig
    from ollie_nb.core._conversation import Conversation

SESSION_FORMAT = 1
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_SURROGATE = re.compile("[\ud800-\udfff]")


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
    data: dict[str, Any],
    directory: Path | None = None,
    redact: Callable[[str], str] | None = None,
) -> Path:
    """Write atomically with mode 0600 (the file may hold private conversation text).

    `redact` gets every string of `data` before it is encoded (JSON escapes a secret
    holding a quote, a backslash or a control character out of a text redactor's reach).
    """
    directory = directory or sessions_dir()
    make_private_dir(directory)
    path = session_path(directory, data["id"])
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if redact is not None:
        data = redact_data(data, redact)
    payload = json.dumps({"format": SESSION_FORMAT, **data}, ensure_ascii=False, indent=1)
    # A lone surrogate (a JSON escape in a tool argument) has no UTF-8 form; as a \uXXXX
    # escape it is still valid JSON and loads back as the same string.
    payload = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", payload)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(payload)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def load_session(session_id: str, directory: Path | None = None) -> dict[str, Any]:
    """Read a session by id (or unique id prefix, or name); corrupt files raise SessionError."""
    path = _find(session_id, directory or sessions_dir())
    return _read(path)


def list_sessions(directory: Path | None = None) -> list[SessionInfo]:
    """Saved sessions, newest first; unreadable files are skipped."""
    directory = directory or sessions_dir()
    infos = []
    for path in sorted(directory.glob("*.json"), reverse=True):
        try:
            data = _read(path)
        except SessionError:
            continue
        history = data.get("history", [])
        first = next((m.get("content", "") for m in history if m.get("role") == "user"), "")
        infos.append(
            SessionInfo(
                id=data["id"],
                name=data.get("name", ""),
                updated=float(data.get("updated", 0)),
                messages=len(history),
                first_prompt=" ".join(str(first).split())[:80],
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


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SessionError(
            f"{path}:{exc.lineno}:{exc.colno}: corrupt session file ({exc.msg})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionError(f"{path}: cannot read session: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("history"), list) or "id" not in data:
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


def session_payload(
    convo: Conversation,
    config: AgentConfig,
    workdir: str,
    plans: Sequence[PlanRecord],
    backend: Any,
) -> dict[str, Any]:
    """A conversation's session as JSON data (AgentCore.session_data); `backend` may be None."""
    return {
        "id": convo.session_id,
        "name": convo.session_name,
        "created": convo.created,
        "updated": time.time(),
        "agent": config.name,
        "agent_path": config.path,
        "backend": getattr(backend, "name", ""),
        "model": getattr(backend, "model", ""),
        "workdir": workdir,
        "history": [m.to_dict() for m in convo.history],
        "usage": {
            "input_tokens": convo.usage.input_tokens,
            "output_tokens": convo.usage.output_tokens,
            "requests": convo.usage.requests,
        },
        "plans": [plan_to_dict(p) for p in plans],
        "errors": list(convo.errors),  # failed model calls, kept out of the history
    }


@dataclass(frozen=True)
class SavedSession:
    """What a saved session brings back to an agent."""

    history: list[Message]
    plans: list[PlanRecord]
    usage: UsageTotals
    name: str
    created: float
    last_reply: str
    errors: tuple[dict[str, Any], ...] = ()
    drafts: Mapping[int, PlanDraft] = field(default_factory=dict)  # of held plans

    @classmethod
    def decode(cls, data: Mapping[str, Any], key: str) -> SavedSession:
        """Decode a loaded session; malformed content is a SessionError naming the session."""
        try:
            history = [Message.from_dict(m) for m in data["history"]]
            plans = [plan_from_dict(p) for p in data.get("plans", [])]
            usage = data.get("usage", {})
            totals = UsageTotals(
                int(usage.get("input_tokens", 0)),
                int(usage.get("output_tokens", 0)),
                int(usage.get("requests", 0)),
            )
            created = float(data.get("created", time.time()))
            errors = tuple(dict(e) for e in data.get("errors", ()))
            drafts = drafts_from_dict(data.get("drafts") or {})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SessionError(f"session {key}: malformed content ({exc})") from None
        last = next(
            (m.content for m in reversed(history) if m.role == "assistant" and m.content), ""
        )
        name = str(data.get("name", ""))
        return cls(history, plans, totals, name, created, last, errors, drafts)
