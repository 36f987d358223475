"""Session: the agent's conversation with its file (`core.session`).

It saves, restores, resumes, renames, clears and compacts; what it reads or restores
beyond the conversation (plans, sub-agents, the agent in use) comes as `SessionParts`,
values and calls the core hands it, so it holds no reference to the core.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ollie_nb.core._agents import require_trusted
from ollie_nb.core._compact import Compaction
from ollie_nb.core._config import AgentConfig
from ollie_nb.core._conversation import Conversation
from ollie_nb.core._events import Event, Notice
from ollie_nb.core._plans import Plans
from ollie_nb.core._secrets import OnceRedaction
from ollie_nb.core._session_log import SessionLog
from ollie_nb.core._sessions import (
    SavedSession,
    list_sessions,
    make_private_dir,
    read_session,
    session_path,
    sessions_dir,
)
from ollie_nb.errors import AgentBusyError, ConfigError, SessionError
from ollie_nb.llm import Message

if TYPE_CHECKING:
    from ollie_nb.llm import Backend


@dataclass(frozen=True)
class SessionParts:
    """What a session saves and restores beyond its conversation, as values and calls."""

    plans: Plans
    agent: Callable[[], AgentConfig]  # the agent config in use
    backend: Callable[[], Backend | None]
    workdir: Callable[[], str]
    children: Callable[[], list[dict[str, Any]]]  # the sub-agents as saved data
    histories: Callable[[], dict[str, list[Message]]]  # the sub-agents' histories by name
    restore_children: Callable[[Iterable[Mapping[str, Any]], Mapping[str, list[Message]]], int]
    running_plan: Callable[[], int]  # the plan worked in parallel now (0: none)
    running: Callable[[], bool]  # a turn runs
    compact: Callable[[], Awaitable[Compaction]]  # the turn runner's compaction, counted
    switch_agent: Callable[[str], Awaitable[object]]
    redact: Callable[[], OnceRedaction]  # one save's redaction, secrets collected once
    emit: Callable[[Event], None]


class Session(Conversation):
    """The agent's conversation and its session file: save, restore, resume, rename, clear,
    compact, data."""

    def __init__(self, parts: SessionParts) -> None:
        super().__init__()
        self._parts = parts
        self._log = SessionLog()  # where the file stands: a save appends what changed

    def data(self) -> SavedSession:
        """The session as it would be saved: history, usage, plans, sub-agents, the agent."""
        config, backend, parts = self._parts.agent(), self._parts.backend(), self._parts
        running = parts.running_plan()
        return SavedSession(
            id=self.session_id,
            history=self.history,
            name=self.session_name,
            created=self.created,
            updated=time.time(),
            agent=config.name,
            agent_path=config.path,
            backend=getattr(backend, "name", ""),
            model=getattr(backend, "model", ""),
            workdir=parts.workdir(),
            usage=copy.copy(self.usage),
            plans=tuple(parts.plans),
            errors=tuple(self.errors),
            subagents=tuple(parts.children()),
            children=parts.histories(),
            runs=(running,) if running else (),
            drafts=parts.plans.book.drafts(),
        )

    def save(self) -> Path | None:
        """Append what changed to the session file (0600; rewritten whole when due); an
        empty conversation is not saved, a failed write is an error notice."""
        if not self.history:
            return None
        try:
            directory = sessions_dir()
            make_private_dir(directory)
            path = session_path(directory, self.session_id)
            data = self.data()
            redact = self._parts.redact()
            self._log.save(
                path, data.name, data.fields(), self.history, data.children, redact, redact.digests
            )
        except OSError as exc:
            self._parts.emit(Notice(f"could not save the session: {exc}", "error"))
            return None
        return path

    def restore(self, key: str) -> SavedSession:
        """Load a saved session's history, usage, plans and sub-agents; later saves append
        to its file."""
        if self._parts.running():
            raise AgentBusyError("a turn is running; restore after it ends")
        loaded = read_session(key)
        saved = loaded.session
        self.history, self.usage = saved.history, saved.usage
        self.session_id, self.session_name, self.created = saved.id, saved.name, saved.created
        self.reply, self.errors = saved.last_reply, list(saved.errors)
        self._parts.plans.book.reset(saved.plans, saved.drafts)
        self._parts.restore_children(saved.subagents, saved.children)
        self._log.adopt(loaded.path.resolve(), self.history, saved.children, loaded.read)
        return saved

    async def resume(self, key: str) -> str:
        """Restore a session and the agent it used; a note when that agent cannot come back.

        The agent (servers, hooks, trust) is switched to by the path the session
        recorded, a project agent only when trusted as it is now; a session of the
        default agent, or of the current one, switches nothing.
        """
        saved = self.restore(key)
        notes = (_runs_note(saved.runs), self._parts.plans.held_note())
        runs = "\n".join(n for n in notes if n)
        name, path = saved.agent or "default", saved.agent_path
        config = self._parts.agent()
        if name == config.name and path == config.path:
            return runs
        try:
            if path:
                require_trusted(path)  # a project agent edited since it was trusted asks again
            await self._parts.switch_agent(path or name)
        except (ConfigError, OSError) as exc:
            return (
                f"this session used the agent {name!r} ({path or 'by name'}), which could not "
                f"be loaded: {exc}; switch with %ollie agent NAME|PATH"
            ) + (f"\n{runs}" if runs else "")
        agent = f"agent: {self._parts.agent().name} (the agent this session used)"
        return agent + (f"\n{runs}" if runs else "")

    def rename(self, name: str) -> Path | None:
        """Name the session and save it; None when there is nothing to save yet (the name
        is saved with the first prompt). A name another saved session has is refused."""
        name = name.strip()
        taken = [s.id for s in list_sessions() if s.name == name and s.id != self.session_id]
        if taken:
            raise SessionError(
                f"a saved session is named {name!r} already ({taken[0]}); choose another name"
            )
        self.session_name = name
        return self.save()

    def clear(self) -> None:
        """Forget the conversation and its plans (usage stays); a new session id starts."""
        super().clear()
        self._parts.plans.book.reset()

    async def compact(self) -> Compaction:
        """Replace the history with the model's summary and the user's latest messages."""
        if self._parts.running():
            raise AgentBusyError("a turn is running; compact after it ends")
        return await self._parts.compact()


def _runs_note(runs: Iterable[int]) -> str:
    """What resuming says of the parallel runs the session had under way."""
    numbers = [str(n) for n in runs]
    if not numbers:
        return ""
    return (
        f"plan {', '.join(numbers)} was being worked in parallel: %ollie run --parallel "
        "continues it (done steps stay done; the old kernel's claims reopen when their "
        "lease ends)"
    )
