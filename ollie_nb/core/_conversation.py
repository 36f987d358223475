"""Conversation: one agent's history, usage, ids and last reply, with its session file.

It owns what a session file holds and how the history is compacted; the agent
(AgentCore) hands it the settings a save or a compaction needs (the chat backend,
the system prompt, the hooks), so it holds no reference back to the agent.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
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
from ollie_nb.core._config import AgentConfig
from ollie_nb.core._history import TokenEstimate, UsageTotals
from ollie_nb.core._hooks import HookOutcome
from ollie_nb.core._sessions import (
    SavedSession,
    load_session,
    new_session_id,
    save_session,
    session_payload,
    sessions_dir,
)
from ollie_nb.llm import Message
from ollie_nb.planning import PlanRecord

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

    def payload(
        self, config: AgentConfig, workdir: str, plans: Sequence[PlanRecord], backend: Any
    ) -> dict[str, Any]:
        """The session as JSON data: history, usage, plans (secrets are redacted on save)."""
        return session_payload(self, config, workdir, plans, backend)

    def save(self, payload: Mapping[str, Any], redact: Redact) -> Path | None:
        """Write the session file (0600); an empty conversation is not saved."""
        if not self.history:
            return None
        return save_session(dict(payload), redact=redact)

    def restore(self, session_id: str) -> tuple[dict[str, Any], SavedSession]:
        """Load a saved session's history, usage, ids and last reply; its data and plans."""
        data = load_session(session_id)
        saved = SavedSession.decode(data, session_id)
        self.history, self.usage = saved.history, saved.usage
        self.session_id, self.session_name, self.created = data["id"], saved.name, saved.created
        self.reply = saved.last_reply
        self.errors = list(saved.errors)
        return data, saved

    # -- compaction ----------------------------------------------------------------

    async def compact(
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
