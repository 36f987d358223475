"""Conversation: one agent's history, usage, ids and last reply, and its compaction.

A sub-agent's conversation is one; the agent's own is its `Session`, which adds the
session file. A compaction is handed what it needs (the chat backend, the system
prompt, the hooks), so a conversation holds no reference back to the agent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ollie_nb.core._compact import (
    Compaction,
    Send,
    archive,
    archive_path,
    compact_result,
    keep_budget,
    summarise,
)
from ollie_nb.core._history import TokenEstimate, UsageTotals
from ollie_nb.core._hooks import HookOutcome
from ollie_nb.core._sessions import new_session_id, sessions_dir
from ollie_nb.llm import Message

if TYPE_CHECKING:
    from ollie_nb.llm import Backend

Hooks = Callable[[str, dict[str, Any]], Awaitable[HookOutcome]]
"""Runs the agent config's hooks for one event: (event, payload) -> outcome."""
Redact = Callable[[str], str]


class Conversation:
    """History, usage, session id and name, creation time and the last reply of one agent."""

    def __init__(self, session_id: str | None = None) -> None:
        self.history: list[Message] = []
        self.usage = UsageTotals()
        self.session_id = session_id or new_session_id()
        self.session_name = ""
        self.created = time.time()
        self.reply = ""
        self.errors: list[dict[str, Any]] = []  # failed model calls: saved, never sent
        self._estimate = TokenEstimate()

    def record_error(self, message: str) -> None:
        """A failed model call: kept beside the history (after message N), not in it."""
        self.errors.append({"at": len(self.history), "time": time.time(), "error": message})

    def clear(self) -> None:
        """Forget the conversation; a new session id starts (usage stays)."""
        self.history = []
        self.reply = ""
        self.errors = []
        self.session_id = new_session_id()
        self.session_name = ""
        self.created = time.time()

    def context_size(self, system_prompt: str) -> int:
        """Tokens the next request will send: the last reported input size, else an estimate."""
        estimate = self._estimate(system_prompt, self.history)
        return max(self.usage.last_input_tokens, estimate) if self.history else estimate

    # -- the session file ----------------------------------------------------------

    @property
    def archive_path(self) -> Path:
        """Where compacted-away messages go: `<session id>.archive.jsonl` beside the session."""
        return archive_path(sessions_dir() / f"{self.session_id}.json")

    # -- compaction ----------------------------------------------------------------

    async def compact_history(
        self,
        backend: Backend,
        system_prompt: str,
        send: Send,
        hooks: Hooks,
        redact: Redact,
    ) -> Compaction:
        """Replace the history with the model's summary and the user's latest messages.

        pre/postCompact hooks run around it and the old history is archived; a summary
        that comes back empty, or a request refused at a spend cap, leaves the history as
        it was. `send` is the model gateway's request, counted in the session's spend.
        """
        if not self.history:
            return Compaction(None, "nothing to compact")
        before = await hooks("preCompact", {"messages": len(self.history)})
        extra = "\n".join(redact(c) for c in before.context)
        summary = await summarise(send, system_prompt, self.history, extra)
        try:
            window = await backend.context_length()
        except Exception:  # unknown: ollie's budget
            window = None
        done = compact_result(summary, self.history, keep_budget(window))
        if done.history is None:
            return done
        archive(self.archive_path, self.history, redact)
        self.history = done.history
        self.usage.last_input_tokens = 0  # the next request's size is the new history's
        after = await hooks("postCompact", {"summary": summary})
        if after.context:
            self.history.append(Message.user("\n".join(redact(c) for c in after.context)))
            self.history.append(Message.assistant("Noted."))
        return done


SAVE_SHARE = 10  # a save after a tool round waits 10x its last duration since the last one


class RoundSaves:
    """Saves after tool rounds (the agent's or a child's) within a turn, as after a turn.

    At most a tenth of the time goes to these saves: a save appends what the round added
    (well under a millisecond), but one that rewrote a 10,000-message file (300 ms: after a
    compaction, or once the log doubled) defers the next save by 3 s.
    """

    def __init__(self, save: Callable[[], object]) -> None:
        self._save = save
        self._saved_at = 0.0  # monotonic time of the last save after a tool round
        self._save_cost = 0.0  # how long it took
        self._due: asyncio.TimerHandle | None = None  # a deferred save after a round

    def round_ended(self) -> None:
        """A tool round joined a history: save now, or once the share of time allows."""
        if self._due is not None:
            return  # a save is due already: it takes this round along
        wait = self._saved_at + SAVE_SHARE * self._save_cost - time.monotonic()
        if wait > 0:
            self._due = asyncio.get_running_loop().call_later(wait, self._round_save)
            return
        self._round_save()

    def save_due(self) -> None:
        """Make a deferred save now: a history is about to be replaced (a worker's next
        step), and the rounds the save would take along must reach the file first."""
        if self._due is not None:
            self._due.cancel()
            self._round_save()

    def _round_save(self) -> None:
        self._due = None
        start = time.monotonic()
        self._save()
        self._saved_at = time.monotonic()
        self._save_cost = self._saved_at - start
