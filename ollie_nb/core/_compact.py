"""Compaction: the model summarises the conversation; the summary and the user's latest words stay.

As in ollie: a turn compacts first when the context reaches 75% of the model's
window; the most recent user messages (up to about 20,000 tokens) are kept
verbatim after the summary, so the user's instructions survive; the messages
that are replaced go to an append-only JSONL archive next to the session.
A compaction that gets no usable summary changes nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ollie_nb.llm import Message, StreamEvent, TextDelta
from ollie_nb.redaction import redact_data

Send = Callable[[Sequence[Message]], AsyncGenerator[StreamEvent, None]]
"""Sends one model request (no tools) through the model gateway, counted in the session."""

COMPACT_PROMPT = (
    "Summarise our conversation so far for your own later use: the goal, decisions made, "
    "the current plan and each step's state, facts learned, and open questions. "
    "Be complete but brief; plain text."
)
SUMMARY_HEAD = "Summary of the conversation so far:"
KEPT_HEAD = "The user's most recent messages, verbatim:"
COMPACT_AT = 0.75  # of the model's context window (ollie's rule)
KEEP_USER_TOKENS = 20_000  # user messages kept verbatim after the summary (ollie's budget)
NO_SUMMARY = "the model gave no summary; the history is unchanged"


@dataclass(frozen=True)
class Compaction:
    """What a compaction did: the new history (None when unchanged) and a line saying so."""

    history: list[Message] | None
    note: str
    summary: str = ""


def needs_compaction(size: int, window: int | None, ratio: float = COMPACT_AT) -> bool:
    """True when `size` tokens reach `ratio` of a known context window."""
    return bool(window) and size >= ratio * window  # type: ignore[operator]


async def summarise(send: Send, system: str, history: Sequence[Message], extra: str = "") -> str:
    """The model's summary of `history` (no tools offered); empty when it gave none.

    `extra` (preCompact hook output) is added to the request for the summary.
    """
    prompt = f"{COMPACT_PROMPT}\n\n{extra}" if extra else COMPACT_PROMPT
    messages = [Message.system(system), *history, Message.user(prompt)]
    parts: list[str] = []
    stream = send(messages)
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
    finally:
        await stream.aclose()
    return "".join(parts).strip()


def recent_user_texts(history: Sequence[Message], budget: int = KEEP_USER_TOKENS) -> list[str]:
    """The latest user messages (oldest first) that fit in `budget` tokens (4 characters each)."""
    kept: list[str] = []
    used = 0
    for message in reversed(history):
        if message.role != "user" or message.content.startswith(SUMMARY_HEAD):
            continue
        cost = len(message.content) // 4 + 1
        if used + cost > budget:
            break
        kept.append(message.content)
        used += cost
    return kept[::-1]


def compacted_history(summary: str, kept: Sequence[str] = ()) -> list[Message]:
    """The history that replaces the old one: summary, then the kept user messages, then an ack."""
    text = f"{SUMMARY_HEAD}\n{summary}"
    if kept:
        quoted = "\n\n---\n\n".join(kept)
        text += f"\n\n{KEPT_HEAD}\n\n{quoted}"
    return [Message.user(text), Message.assistant("Noted; I will continue from this summary.")]


def keep_budget(window: int | None) -> int:
    """Tokens of user messages kept: ollie's 20,000, at most a quarter of a known window."""
    return min(KEEP_USER_TOKENS, window // 4) if window else KEEP_USER_TOKENS


def compact_result(
    summary: str, history: Sequence[Message], budget: int = KEEP_USER_TOKENS
) -> Compaction:
    """The new history from a summary, or no change when the summary is unusable."""
    if not summary.strip():
        return Compaction(None, NO_SUMMARY)
    kept = recent_user_texts(history, budget)
    new = compacted_history(summary, kept)
    note = f"compacted {len(history)} messages into a summary and {len(kept)} user messages"
    return Compaction(new, note, summary)


def archive_path(session_file: Path) -> Path:
    """The archive beside a session file: `<id>.archive.jsonl`."""
    return session_file.with_name(f"{session_file.stem}.archive.jsonl")


def archive(
    path: Path, history: Sequence[Message], redact: Callable[[str], str] = lambda t: t
) -> None:
    """Append the pre-compaction messages as one JSON line each (0600, never rewritten)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.time()
    lines = [
        json.dumps(redact_data({"archived": stamp, **m.to_dict()}, redact), ensure_ascii=True)
        + "\n"
        for m in history
    ]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.writelines(lines)
