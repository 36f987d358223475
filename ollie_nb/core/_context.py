"""What an agent's parts share (`AgentContext`, fixed) and what its turns change (`TurnState`).

pydantic-ai's GraphAgentDeps and GraphAgentState: the turn loop, the tool step, the model
gateway and the sub-agents are handed these two values, never the agent that owns them.
AgentCore builds a new context when it starts, switches agent, changes backend or
workdir; a sub-agent's context is derived from its parent's (`AgentContext.child`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING

from ollie_nb.core._budget import Ledger, SpendBook
from ollie_nb.core._config import AgentConfig
from ollie_nb.core._conversation import Conversation
from ollie_nb.core._events import Event
from ollie_nb.core._history import TokenEstimate
from ollie_nb.core._prompt import system_prompt
from ollie_nb.core._routing import ToolRouter, TrustGate, child_router
from ollie_nb.core._secrets import Redactor
from ollie_nb.tools import subprocess_environ

if TYPE_CHECKING:
    from ollie_nb.core._cap_ask import CapAsk
    from ollie_nb.core._tool_servers import ToolServers
    from ollie_nb.llm import Backend
    from ollie_nb.planning import StepRef, TaskClient


class Phase(str, Enum):
    """Where a turn stands: what the notebook's status shows."""

    IDLE = "idle"
    WAITING = "waiting"  # a model request is sent, nothing has come back yet
    STREAMING = "streaming"  # reply text is coming
    THINKING = "thinking"  # reasoning is coming
    TOOL = "tool"  # a tool call runs (`TurnState.tool` names it)


def _none() -> list[str]:
    return []


async def _no_reminder() -> str:
    return ""


@dataclass(frozen=True)
class AgentContext:
    """What an agent's parts share, fixed while the agent's config, backend and workdir stay."""

    config: AgentConfig
    backend: Backend
    servers: ToolServers | None
    router: ToolRouter  # the tool gateway: every call is routed and dispatched here
    gate: TrustGate  # trust and approval, asked by the tool gateway
    redact: Redactor
    workdir: str
    emit: Callable[[Event], None]  # the event sink; a failing sink is logged, never raised
    spend: SpendBook  # the ledgers and caps every request is counted in
    save_round: Callable[[], None]  # a tool round joined a history: the session is saved
    save_session: Callable[[], None]  # the history was compacted: the session is saved now
    save_due: Callable[[], None] = lambda: None  # a history is replaced: a deferred save now
    spawn_context: tuple[str, ...] = ()  # agentSpawn hooks' context for the system prompt
    prompt_suffix: str = ""  # a sub-agent's line about who it is
    injected: Callable[[], list[str]] = _none  # what the user told the running turn meanwhile
    reminder: Callable[[], Awaitable[str]] = _no_reminder  # the open plan, as a note
    compacts: bool = True  # a sub-agent's history is not compacted
    cap_ask: CapAsk | None = None  # who a request at a reached cap asks (None: it stops)

    @property
    def task_client(self) -> TaskClient | None:
        """The task-store gateway of the wired task server (None without one)."""
        return self.servers.task_client if self.servers is not None else None

    def system_prompt(self) -> str:
        """Who the agent is, where it works (dir, platform, date), its agent prompt and context."""
        text = system_prompt(
            self.servers, self.workdir, self.config.prompt, list(self.spawn_context)
        )
        return text + self.prompt_suffix

    def subprocess_environ(self) -> dict[str, str]:
        """The environment hooks and execute_code get: no secrets unless the agent passes them."""
        return subprocess_environ(secrets=self.redact.values(), passthrough=self.config.pass_env)

    def child(self, name: str, emit: Callable[[Event], None]) -> AgentContext:
        """A sub-agent's context: the parent's tools without `subagent` (depth 1), its own
        line in the system prompt and sink, no injected text, reminder or compaction."""
        return replace(
            self,
            router=child_router(self.router),
            prompt_suffix=f"\n\nYou are sub-agent {name!r} of this agent.",
            emit=emit,
            injected=_none,
            reminder=_no_reminder,
            compacts=False,
        )


@dataclass
class TurnState:
    """What an agent's (or sub-agent's) turns change: the conversation, the ledger the running
    turn counts in, and the phase it is in."""

    conversation: Conversation
    ledger: Ledger
    parent: Conversation | None = None  # a sub-agent's requests count in its parent's usage too
    phase: Phase = Phase.IDLE
    tool: str = ""  # the tool running, in Phase.TOOL
    step: StepRef | None = None  # the plan step the running turn works, if any
    # a request's input size for the caps, counted from the messages added since the last
    # request, not over the whole history (a long session would pay a pass per request)
    request_size: TokenEstimate = field(default_factory=TokenEstimate)

    @property
    def session_id(self) -> str:
        return self.conversation.session_id

    def enter(self, phase: Phase, tool: str = "") -> None:
        """The turn is now in `phase` (with `tool`, the call that runs)."""
        self.phase, self.tool = phase, tool

    @property
    def label(self) -> str:
        """The phase as the status shows it: idle, waiting, streaming, thinking, tool:NAME."""
        return f"tool:{self.tool}" if self.phase is Phase.TOOL else self.phase.value
