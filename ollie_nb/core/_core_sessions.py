"""AgentCore's history and session methods: clear, compact, save, restore, resume, rename."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from ollie_nb.core._agents import require_trusted
from ollie_nb.core._compact import (
    Compaction,
    archive,
    archive_path,
    compact_result,
    keep_budget,
    summarise,
)
from ollie_nb.core._config import ConfigError
from ollie_nb.core._events import Notice
from ollie_nb.core._plans import PlanBook
from ollie_nb.core._sessions import (
    SavedSession,
    SessionInfo,
    list_sessions,
    load_session,
    new_session_id,
    save_session,
    session_payload,
    sessions_dir,
)
from ollie_nb.core._turn import params
from ollie_nb.llm import Message

log = logging.getLogger("ollie_nb.core")


class SessionMethods:
    """The conversation and its session file (a part of AgentCore, which holds the state)."""

    # -- history -----------------------------------------------------------

    def clear(self) -> None:
        """Forget the conversation (servers, queue and usage stay); a new session id starts."""
        self.history = []
        self.reply = ""
        self.session_id = new_session_id()
        self.session_name = ""
        self.created = time.time()
        self.plan_book = PlanBook()
        if self.env is not None:
            self.env.reasoning.plans.clear()
            self.env.reasoning.first_number = 1

    async def compact(self) -> Compaction:
        """Replace the history with the model's summary and the user's latest messages."""
        if self.is_running:
            raise RuntimeError("a turn is running; compact after it ends")
        return await self.compact_history()

    async def compact_history(self) -> Compaction:
        """Compact now (also from inside a turn): pre/postCompact hooks, archive, then save.

        A summary that comes back empty leaves the history as it was.
        """
        if not self.history:
            return Compaction(None, "nothing to compact")
        before = await self._runner.hooks("preCompact", {"messages": len(self.history)})
        extra = "\n".join(self.redact(c) for c in before.context)
        self.usage.requests += 1
        summary = await summarise(
            self.backend, self.system_prompt(), self.history, params(self.config), extra
        )
        try:
            window = await self.backend.context_length()
        except Exception:  # unknown: ollie's budget
            window = None
        done = compact_result(summary, self.history, keep_budget(window))
        if done.history is None:
            return done
        archive(self.archive_path, self.history, self.redact)
        self.history = done.history
        self.usage.last_input_tokens = 0  # the next request's size is the new history's
        after = await self._runner.hooks("postCompact", {"summary": summary})
        if after.context:
            self.history.append(Message.user("\n".join(self.redact(c) for c in after.context)))
            self.history.append(Message.assistant("Noted."))
        if self.autosave:
            self.save()
        return done

    @property
    def last_error(self) -> str:
        """The traceback of the last internal error in a turn ('' when none)."""
        return self._runner.last_error

    @property
    def archive_path(self) -> Path:
        """Where compacted-away messages go: `<session id>.archive.jsonl` beside the session."""
        return archive_path(sessions_dir() / f"{self.session_id}.json")

    # -- sessions ----------------------------------------------------------

    def session_data(self) -> dict[str, Any]:
        """The session as JSON data: history, usage, plans (secrets are redacted on save)."""
        return session_payload(self, self.plans, self._backend)

    def save(self) -> Path | None:
        """Write the session file (0600); empty sessions are not saved."""
        if not self.history:
            return None
        try:
            return save_session(self.session_data(), redact=self.redact)
        except OSError as exc:
            self.emit(Notice(f"could not save the session: {exc}", "error"))
            return None

    def restore(self, session_id: str) -> dict[str, Any]:
        """Load a saved session's history, usage and plans into this agent."""
        if self.is_running:
            raise RuntimeError("a turn is running; restore after it ends")
        data = load_session(session_id)
        saved = SavedSession.decode(data, session_id)
        self.history, self.usage = saved.history, saved.usage
        self.session_id, self.session_name, self.created = data["id"], saved.name, saved.created
        self.plan_book = PlanBook(saved.plans)
        if self.env is not None:
            self.env.reasoning.plans.clear()
            self.env.reasoning.first_number = len(saved.plans) + 1
        self.reply = saved.last_reply
        return data

    async def resume(self, session_id: str) -> str:
        """Restore a session and the agent it used; a note when that agent cannot come back.

        The agent (servers, hooks, trust) is switched to by the path the session
        recorded, a project agent only when trusted as it is now; a session of the
        default agent, or of the current one, switches nothing.
        """
        data = self.restore(session_id)
        name, path = str(data.get("agent") or "default"), str(data.get("agent_path") or "")
        if name == self.config.name and path == self.config.path:
            return ""
        try:
            if path:
                require_trusted(path)  # a project agent edited since it was trusted asks again
            await self.switch_agent(path or name)
        except (ConfigError, OSError) as exc:
            return (
                f"this session used the agent {name!r} ({path or 'by name'}), which could not "
                f"be loaded: {exc}; switch with %ollie agent NAME|PATH"
            )
        return f"agent: {self.config.name} (the agent this session used)"

    def rename(self, name: str) -> None:
        """Name the session (and save it, so the name sticks)."""
        self.session_name = name.strip()
        self.save()

    @staticmethod
    def sessions() -> list[SessionInfo]:
        return list_sessions()
