"""A conversation's bookkeeping: history repair as pure functions (each returns a new list and
leaves its input alone), its token estimate and its usage totals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ollie_nb.llm import Message, Usage
from ollie_nb.planning import Spend
from ollie_nb.planning.prompts import CANCELLED_RESULT, INTERRUPTED_NOTE


def close_interrupted(history: Sequence[Message], partial: str) -> list[Message]:
    """The history after an interruption: every tool call answered, and a note that ends the turn.

    `partial` is the reply text streamed before the interruption; it is kept in the note.
    A history whose last message is a complete reply needs nothing more.
    """
    repaired = list(history)
    last_calls = next(
        (i for i in range(len(repaired) - 1, -1, -1) if _has_calls(repaired[i])), None
    )
    if last_calls is not None:
        answered = {m.tool_call_id for m in repaired[last_calls:] if m.role == "tool"}
        for call in repaired[last_calls].tool_calls:
            if call.id not in answered:
                repaired.append(Message.tool(call.id, CANCELLED_RESULT, name=call.name))
    if repaired and repaired[-1].role == "assistant" and not repaired[-1].tool_calls:
        return repaired
    partial = partial.strip()
    repaired.append(
        Message.assistant(f"{partial} {INTERRUPTED_NOTE}" if partial else INTERRUPTED_NOTE)
    )
    return repaired


KEPT_IMAGES = 8
"""Images of the latest tool results sent with each request (two results' worth at four each).

Every request carries each image again: ten screenshot calls made every later request carry
40 images, 48 MB. Older images stay in the history (and the session); the request gets a note.
"""


def older_images_described(history: Sequence[Message], keep: int = KEPT_IMAGES) -> list[Message]:
    """The history as a request sends it: tool messages older than the last `keep` images
    lose their images for a one-line note (their text already describes each image)."""
    if sum(len(m.images) for m in history) <= keep:
        return list(history)
    sent: list[Message] = []
    room = keep
    for message in reversed(history):
        if message.images and len(message.images) > room:
            message = replace(message, content=message.content + _unsent(message, keep), images=())
            room = 0
        elif message.images:
            room -= len(message.images)
        sent.append(message)
    return sent[::-1]


def _unsent(message: Message, keep: int) -> str:
    count = len(message.images)
    images = "image" if count == 1 else "images"
    return f"\n[{count} {images} of this result not sent again: requests carry the last {keep}]"


def _has_calls(message: Message) -> bool:
    return message.role == "assistant" and bool(message.tool_calls)


def estimate_tokens(system: str, history: Sequence[Message]) -> int:
    """About how many tokens a request of this system prompt and history is (4 characters each)."""
    return (len(system) + sum(_chars(m) for m in history)) // 4


def _chars(message: Message) -> int:
    return len(message.content) + sum(len(c.arguments) for c in message.tool_calls)


class TokenEstimate:
    """estimate_tokens for a history that mostly grows: only new messages are counted.

    Checked before every turn, a full count would cost a pass over the whole history;
    a history that was replaced (compaction, restore, clear) is counted again.
    """

    def __init__(self) -> None:
        self._count = 0
        self._last: Message | None = None
        self._chars = 0

    def __call__(self, system: str, history: Sequence[Message]) -> int:
        n = self._count
        if n and (len(history) < n or history[n - 1] is not self._last):
            n, self._chars = 0, 0
        self._chars += sum(_chars(m) for m in history[n:])
        self._count, self._last = len(history), history[-1] if history else None
        return (len(system) + self._chars) // 4


@dataclass
class UsageTotals:
    """Tokens and requests used in this session."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    last_input_tokens: int = 0
    cost: float | None = None  # money, when the backend reports it with its usage
    cache_read_tokens: int = 0  # of input_tokens: served by the provider's prompt cache
    cache_write_tokens: int = 0  # of input_tokens: written to it
    unpriced: int = 0  # requests whose cost is not known (no price for the model)

    def add(self, usage: Usage) -> None:
        """Count one response's (priced) usage; its input is the context's size now."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_tokens += usage.cache_read_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.last_input_tokens = usage.input_tokens
        if usage.cost is None:
            self.unpriced += 1
        else:
            self.cost = (self.cost or 0.0) + usage.cost

    @property
    def spend(self) -> Spend:
        """The tokens (input plus output) and the dollars, as caps count them."""
        return Spend(self.input_tokens + self.output_tokens, self.cost or 0.0, self.unpriced)

    def add_since(self, now: UsageTotals, before: UsageTotals) -> None:
        """Add what another session used between two readings (a sub-agent's turn).

        The context size (`last_input_tokens`) stays this session's own.
        """
        self.input_tokens += now.input_tokens - before.input_tokens
        self.output_tokens += now.output_tokens - before.output_tokens
        self.requests += now.requests - before.requests
        self.cache_read_tokens += now.cache_read_tokens - before.cache_read_tokens
        self.cache_write_tokens += now.cache_write_tokens - before.cache_write_tokens
        self.unpriced += now.unpriced - before.unpriced
        if now.cost is not None:
            self.cost = (self.cost or 0.0) + now.cost - (before.cost or 0.0)

    @property
    def cost_text(self) -> str:
        """The money: "$0.0123", "no price known", or "$0.0123 + 2 requests with no price
        known" (never $0 for requests whose price is not known)."""
        return self.spend.cost_text

    def __str__(self) -> str:
        requests = "request" if self.requests == 1 else "requests"
        text = (
            f"{self.requests:,} {requests}, {self.input_tokens:,} tokens in, "
            f"{self.output_tokens:,} tokens out"
        )
        if self.cache_read_tokens or self.cache_write_tokens:
            text += (
                f" ({self.cache_read_tokens:,} cached, {self.cache_write_tokens:,} cache writes)"
            )
        return text
