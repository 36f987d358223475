"""The agent core: config, environment wiring, turn loop, sessions, hooks.

Frontend-agnostic: a script drives AgentCore with asyncio; the notebook is one frontend of it.
A name loads its module on first use (PEP 562), so importing one part does not load them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ollie_nb._lazy import lazy_names
from ollie_nb.errors import ConfigError, SessionError

if TYPE_CHECKING:
    from ollie_nb.core._agents import (
        UntrustedAgentError,
        agent_dirs,
        list_agents,
        resolve_agent,
        trust_agent_file,
    )
    from ollie_nb.core._budget import BudgetExceededError, Budgets, CapKind, Caps
    from ollie_nb.core._config import (
        AgentConfig,
        McpServerConfig,
        expand_vars,
        load_agent_config,
    )
    from ollie_nb.core._context import AgentContext, Phase, TurnState
    from ollie_nb.core._core import AgentCore
    from ollie_nb.core._events import (
        Event,
        EventSink,
        Notice,
        NoticeLevel,
        PlanDecided,
        PlanMade,
        PlanProgress,
        ReasoningDelta,
        Retrying,
        TextDelta,
        ToolCalled,
        ToolFinished,
        ToolRefused,
        TurnEnded,
        TurnResult,
        TurnStarted,
        UsageReported,
        WatchNotice,
        WatchWhat,
    )
    from ollie_nb.core._history import UsageTotals
    from ollie_nb.core._inbox_ask import Elsewhere, SharedApprover, Verdict
    from ollie_nb.core._routing import Approver, MaskedArgs
    from ollie_nb.core._session_handle import Session
    from ollie_nb.core._sessions import SavedSession, SessionInfo, list_sessions, sessions_dir
    from ollie_nb.core._tool_servers import (
        ServerDescription,
        ServersDescription,
        ServerState,
        ServerStatus,
        ToolServers,
        connect_tool_servers,
    )
    from ollie_nb.core._tracing import (
        TracingUnavailableError,
        disable_tracing,
        enable_tracing,
        tracing,
    )
    from ollie_nb.planning.prompts import CONTINUE_PROMPT

# Where each public name lives; `__getattr__` imports its module when the name is first used.
_HOMES: dict[str, tuple[str, ...]] = {
    "ollie_nb.core._agents": (
        "UntrustedAgentError",
        "agent_dirs",
        "list_agents",
        "resolve_agent",
        "trust_agent_file",
    ),
    "ollie_nb.core._budget": ("BudgetExceededError", "Budgets", "CapKind", "Caps"),
    "ollie_nb.core._config": ("AgentConfig", "McpServerConfig", "expand_vars", "load_agent_config"),
    "ollie_nb.core._context": ("AgentContext", "Phase", "TurnState"),
    "ollie_nb.core._core": ("AgentCore",),
    "ollie_nb.core._events": (
        "Event",
        "EventSink",
        "Notice",
        "NoticeLevel",
        "PlanDecided",
        "PlanMade",
        "PlanProgress",
        "ReasoningDelta",
        "Retrying",
        "TextDelta",
        "ToolCalled",
        "ToolFinished",
        "ToolRefused",
        "TurnEnded",
        "TurnResult",
        "TurnStarted",
        "UsageReported",
        "WatchNotice",
        "WatchWhat",
    ),
    "ollie_nb.core._history": ("UsageTotals",),
    "ollie_nb.core._inbox_ask": ("Elsewhere", "SharedApprover", "Verdict"),
    "ollie_nb.core._routing": ("Approver", "MaskedArgs"),
    "ollie_nb.core._session_handle": ("Session",),
    "ollie_nb.core._sessions": ("SavedSession", "SessionInfo", "list_sessions", "sessions_dir"),
    "ollie_nb.core._tool_servers": (
        "ServerDescription",
        "ServersDescription",
        "ServerState",
        "ServerStatus",
        "ToolServers",
        "connect_tool_servers",
    ),
    "ollie_nb.core._tracing": (
        "TracingUnavailableError",
        "disable_tracing",
        "enable_tracing",
        "tracing",
    ),
    "ollie_nb.planning.prompts": ("CONTINUE_PROMPT",),
}
__all__ = [
    "CONTINUE_PROMPT",
    "AgentConfig",
    "AgentContext",
    "AgentCore",
    "Approver",
    "BudgetExceededError",
    "Budgets",
    "CapKind",
    "Caps",
    "ConfigError",
    "Elsewhere",
    "Event",
    "EventSink",
    "MaskedArgs",
    "McpServerConfig",
    "Notice",
    "NoticeLevel",
    "Phase",
    "PlanDecided",
    "PlanMade",
    "PlanProgress",
    "ReasoningDelta",
    "Retrying",
    "SavedSession",
    "ServerDescription",
    "ServerState",
    "ServerStatus",
    "ServersDescription",
    "Session",
    "SessionError",
    "SessionInfo",
    "SharedApprover",
    "TextDelta",
    "ToolCalled",
    "ToolFinished",
    "ToolRefused",
    "ToolServers",
    "TracingUnavailableError",
    "TurnEnded",
    "TurnResult",
    "TurnStarted",
    "TurnState",
    "UntrustedAgentError",
    "UsageReported",
    "UsageTotals",
    "Verdict",
    "WatchNotice",
    "WatchWhat",
    "agent_dirs",
    "connect_tool_servers",
    "disable_tracing",
    "enable_tracing",
    "expand_vars",
    "list_agents",
    "list_sessions",
    "load_agent_config",
    "resolve_agent",
    "sessions_dir",
    "tracing",
    "trust_agent_file",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
