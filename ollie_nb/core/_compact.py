"""Compaction: the model summarises the conversation, and the summary replaces the history."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ollie_nb.llm import GenerationParams, Message

if TYPE_CHECKING:
    from ollie_nb.llm import Backend

COMPACT_PROMPT = (
    "Summarise our conversation so far for your own later use: the goal, decisions made, "
    "the current plan and each step's state, facts learned, and open questions. "
    "Be complete but brief; plain text."
)
NO_SUMMARY = "(the model gave no summary)"


async def summarise(
    backend: Backend, system: str, history: Sequence[Message], params: GenerationParams
) -> str:
    """The model's summary of `history` (no tools offered); empty when it gave none."""
    messages = [Message.system(system), *history, Message.user(COMPACT_PROMPT)]
    parts: list[str] = []
    async for event in backend.chat_stream(messages, (), params):
        if event.kind == "text":
            parts.append(event.text)
    return "".join(parts).strip()


def compacted_history(summary: str) -> list[Message]:
    """The history that replaces the old one after a compaction."""
    return [
        Message.user(f"Summary of the conversation so far:\n{summary or NO_SUMMARY}"),
        Message.assistant("Noted; I will continue from this summary."),
    ]
