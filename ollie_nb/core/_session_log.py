"""A session file as a JSON Lines log: a header, a snapshot, then one line per save.

Line 1 is a small header (id, name, first prompt, message count at the snapshot, the
snapshot's size) that a listing reads alone; line 2 the snapshot (every field and the
whole history); each later line what a save changed: the messages added and the fields
whose value differs. A save appends its line with one write, so its cost follows what the
turn added, not the history's length; the file is rewritten whole (to a temporary file,
then renamed) when it has grown past `REWRITE_FACTOR` times its snapshot, or when the
history was rewritten (compaction, clear, a new id) or renamed. A line counts once its
newline is written: a torn last line (a writer killed mid-write) is dropped on load.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ollie_nb.errors import SessionError
from ollie_nb.llm import Message
from ollie_nb.redaction import redact_data

LOG_FORMAT = 2  # 1: one JSON document, rewritten at every save
REWRITE_FACTOR = 2  # a log past twice its snapshot's size is rewritten as one snapshot
_SURROGATE = re.compile("[\ud800-\udfff]")
_TAIL_CHUNK = 1 << 16

Redact = Callable[[str], str]
Histories = Mapping[str, list[Message]]  # the sub-agents' histories by name


@dataclass(frozen=True)
class LogRead:
    """A session log read back: its JSON data, and where a writer can go on appending."""

    data: dict[str, Any]  # the session's fields and "history" (message dicts)
    size: int  # bytes up to the last whole line
    torn: bool  # a torn last line was dropped (the file is longer than `size`)
    snapshot: int  # bytes of the header and snapshot lines


def encode_line(record: Mapping[str, Any], redact: Redact | None) -> bytes:
    """One record as a JSON line, redacted; a lone surrogate as its `\\uXXXX` escape."""
    if redact is not None:
        record = redact_data(record, redact)
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate (a JSON escape in a tool argument) has no UTF-8 form; as a \uXXXX
    # escape it is still valid JSON and loads back as the same string.
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8") + b"\n"


def first_prompt(history: Sequence[Message]) -> str:
    """The first user message on one line, cut to 80 characters (what a listing shows)."""
    first = next((m.content for m in history if m.role == "user"), "")
    return " ".join(str(first).split())[:80]


class SessionLog:
    """Where one session's file stands, so the next save appends only what changed."""

    def __init__(self) -> None:
        self._forget()

    def _forget(self) -> None:
        self._path: Path | None = None
        self._history: list[Message] | None = None  # the list the file holds a prefix of
        self._count = 0  # messages of `_history` in the file
        self._last: Message | None = None  # the last of them, to see an edited tail
        self._name = ""
        self._fields: dict[str, Any] = {}  # each field's JSON data as the file has it
        self._stat: tuple[int, int] | None = None  # (inode, size) after our last write
        self._snapshot = 0
        self._children: dict[str, _Mark] = {}  # the sub-agents' histories, as the file has them
        self._secrets: frozenset[str] = frozenset()  # digests of the secrets masked in the file

    def adopt(self, path: Path, history: list[Message], children: Histories, read: LogRead) -> None:
        """Go on appending to a file just read into `history` and `children` (a torn or old
        file is rewritten at the next save)."""
        self._forget()
        if read.torn or not read.snapshot:
            return
        fields = {k: v for k, v in read.data.items() if k not in _NOT_FIELDS}
        name = str(read.data.get("name", ""))
        self._remember(path, history, children, name, fields, read.snapshot)
        self._stat = _stat(path)

    def save(
        self,
        path: Path,
        name: str,
        fields: Mapping[str, Any],
        history: list[Message],
        children: Histories,
        redact: Redact | None,
        secrets: frozenset[str] = frozenset(),
    ) -> None:
        """Append what changed since the last save, or rewrite the file when it must (also
        when a secret became known since its earlier lines were written: `secrets` are the
        digests of the secrets `redact` masks)."""
        if self._can_append(path, name, history, children) and secrets <= self._secrets:
            self._append(path, fields, history, children, redact)
        else:
            self._rewrite(path, name, dict(fields), history, children, redact)
            self._secrets = secrets

    def _can_append(
        self, path: Path, name: str, history: list[Message], children: Histories
    ) -> bool:
        count = self._count
        return (
            path == self._path
            and name == self._name
            and history is self._history
            and len(history) >= count
            and (count == 0 or history[count - 1] is self._last)
            and all(m.extended_by(children.get(n)) for n, m in self._children.items())
            and self._stat is not None
            and self._stat[1] <= REWRITE_FACTOR * self._snapshot
            and _stat(path) == self._stat  # nobody else wrote or replaced it
        )

    def _append(
        self,
        path: Path,
        fields: Mapping[str, Any],
        history: list[Message],
        children: Histories,
        redact: Redact | None,
    ) -> None:
        changed = {k: v for k, v in fields.items() if self._fields.get(k, _MISSING) != v}
        added = history[self._count :]
        grown = {
            n: h[self._children[n].count if n in self._children else 0 :]
            for n, h in children.items()
        }
        grown = {n: new for n, new in grown.items() if new}
        if not changed and not added and not grown:
            return
        record = {
            "messages": len(history),
            "updated": time.time(),
            "set": changed,
            "add": [m.to_dict() for m in added],
            **(
                {"children": {n: [m.to_dict() for m in new] for n, new in grown.items()}}
                if grown
                else {}
            ),
        }
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.fchmod(fd, 0o600)  # a file made readable by hand is private again
            _write_all(fd, encode_line(record, redact))
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        self._fields.update(changed)
        self._count, self._last = len(history), history[-1] if history else None
        self._children.update({n: _Mark.of(children[n]) for n in grown})
        self._stat = (self._stat[0] if self._stat else 0, size)

    def _rewrite(
        self,
        path: Path,
        name: str,
        fields: dict[str, Any],
        history: list[Message],
        children: Histories,
        redact: Redact | None,
    ) -> None:
        now = time.time()
        body = encode_line(
            {
                "messages": len(history),
                "updated": now,
                "set": fields,
                "add": [m.to_dict() for m in history],
                "children": {n: [m.to_dict() for m in h] for n, h in children.items()},
            },
            redact,
        )
        header = {
            "format": LOG_FORMAT,
            "id": fields["id"],
            "name": name,
            "created": fields.get("created", now),
            "updated": now,
            "messages": len(history),
            "first_prompt": first_prompt(history),
            "snapshot_bytes": len(body),
        }
        head = encode_line(header, redact)
        _replace(path, head + body)
        self._remember(path, history, children, name, fields, len(head) + len(body))
        self._stat = _stat(path)

    def _remember(
        self,
        path: Path,
        history: list[Message],
        children: Histories,
        name: str,
        fields: dict[str, Any],
        snapshot: int,
    ) -> None:
        self._path, self._history, self._name, self._fields = path, history, name, fields
        self._count, self._last = len(history), history[-1] if history else None
        self._children = {n: _Mark.of(h) for n, h in children.items()}
        self._snapshot = snapshot


@dataclass(frozen=True)
class _Mark:
    """How much of a history list the file holds: the list, its length, its last message."""

    history: list[Message]
    count: int
    last: Message | None

    @classmethod
    def of(cls, history: list[Message]) -> _Mark:
        return cls(history, len(history), history[-1] if history else None)

    def extended_by(self, history: list[Message] | None) -> bool:
        """Whether `history` is this list, only grown since (else the file is rewritten)."""
        if history is None:
            return True  # a child retired: its lines stay, the session no longer lists it
        return (
            history is self.history
            and len(history) >= self.count
            and (self.count == 0 or history[self.count - 1] is self.last)
        )


_MISSING = object()
_NOT_FIELDS = ("history", "children", "format", "updated")


def read_log(path: Path) -> LogRead:
    """A session file's data: a log is folded line by line (a torn last line dropped), a
    file of the first format read as one document."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SessionError(f"{path}: cannot read session: {exc}") from None
    if not raw.startswith(b'{"format":'):
        return LogRead(_document(path, raw), len(raw), False, 0)
    end = raw.rfind(b"\n") + 1
    lines = raw[:end].split(b"\n")[:-1]
    if len(lines) < 2:
        raise SessionError(f"{path}: corrupt session file (no snapshot line)")
    header = _header(path, lines[0])
    records = (_line(path, number, line) for number, line in enumerate(lines[1:], 2))
    data = _fold(path, header, records)
    return LogRead(data, end, end < len(raw), len(lines[0]) + len(lines[1]) + 2)


def _fold(path: Path, header: dict[str, Any], records: Iterator[dict[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    history: list[Any] = []
    children: dict[str, list[Any]] = {}
    for number, record in enumerate(records, 2):
        changed, added = record.get("set") or {}, record.get("add") or []
        grown = record.get("children") or {}
        if not (isinstance(changed, dict) and isinstance(added, list) and isinstance(grown, dict)):
            raise SessionError(f"{path}:{number}: corrupt session file (not a save's record)")
        data.update(changed)
        data["updated"] = record.get("updated", data.get("updated", 0))
        history.extend(added)
        for name, new in grown.items():
            children.setdefault(name, []).extend(new)
    data.update(id=header.get("id"), name=header.get("name", ""), history=history)
    data["children"] = children
    return data  # the header's id and name are the ones a listing shows


@dataclass(frozen=True)
class LogSummary:
    """What a listing shows of a session file, read without its history."""

    id: object  # as the file says: the caller checks it is a valid id
    name: str
    updated: float
    messages: int
    first_prompt: str


def read_listing(path: Path) -> LogSummary:
    """A session's summary from the header and the last whole line only (a file of the
    first format is read whole)."""
    with path.open("rb") as file:
        first = file.readline()
        if not first.startswith(b'{"format":'):
            return _document_summary(path, _document(path, first + file.read()))
        header = _header(path, first.rstrip(b"\n"))
        size = os.fstat(file.fileno()).st_size
        if size > len(first) + int(header.get("snapshot_bytes", 0)):
            last = _last_line(file, size, len(first))
            header.update(messages=last.get("messages"), updated=last.get("updated"))
    return _summary(path, header, header.get("first_prompt", ""))


def _document_summary(path: Path, data: dict[str, Any]) -> LogSummary:
    history = data.get("history")
    if not isinstance(history, list):
        raise SessionError(f"{path}: not an ollie_nb session (no id or history)")
    user = (
        m.get("content", "") for m in history if isinstance(m, dict) and m.get("role") == "user"
    )
    return _summary(path, {**data, "messages": len(history)}, " ".join(str(next(user, "")).split()))


def _summary(path: Path, data: Mapping[str, Any], prompt: object) -> LogSummary:
    try:
        return LogSummary(
            id=data.get("id"),
            name=str(data.get("name", "")),
            updated=float(data.get("updated") or 0),
            messages=int(data.get("messages") or 0),
            first_prompt=str(prompt)[:80],
        )
    except (TypeError, ValueError) as exc:
        raise SessionError(f"{path}: corrupt session header ({exc})") from None


def _last_line(file: Any, size: int, floor: int) -> dict[str, Any]:
    """The last whole line's record, read backwards from the end in growing chunks."""
    chunk = _TAIL_CHUNK
    while True:
        start = max(floor, size - chunk)
        file.seek(start)
        tail = file.read(size - start)
        end = tail.rfind(b"\n")  # a torn last line ends before the file does
        begin = tail.rfind(b"\n", 0, end) + 1 if end > 0 else 0
        if begin > 0 or start == floor:
            try:
                return dict(json.loads(tail[begin:end]))
            except (ValueError, TypeError):
                return {}
        chunk *= 4


def _header(path: Path, line: bytes) -> dict[str, Any]:
    header = _line(path, 1, line)
    if header.get("format") != LOG_FORMAT:
        raise SessionError(
            f"{path}: session format {header.get('format')!r}; this ollie_nb reads {LOG_FORMAT}"
        )
    return header


def _line(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SessionError(f"{path}:{number}: corrupt session file ({exc})") from None
    if not isinstance(record, dict):
        raise SessionError(f"{path}:{number}: corrupt session file (not an object)")
    return record


def _document(path: Path, raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise SessionError(
            f"{path}:{exc.lineno}:{exc.colno}: corrupt session file ({exc.msg})"
        ) from None
    except UnicodeDecodeError as exc:
        raise SessionError(f"{path}: cannot read session: {exc}") from None
    if not isinstance(data, dict):
        raise SessionError(f"{path}: not an ollie_nb session (no id or history)")
    return data


def _replace(path: Path, payload: bytes) -> None:
    """Write `payload` to a temporary 0600 file beside `path`, then rename it over `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            _write_all(fd, payload)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size
