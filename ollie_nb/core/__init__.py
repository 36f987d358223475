"""The agent core: config, environment wiring, turn loop, sessions, hooks.

Frontend-agnostic: a script drives AgentCore with asyncio; the notebook is one frontend of it.
"""

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
from ollie_nb.errors import ConfigError, SessionError
from ollie_nb.planning.prompts import CONTINUE_PROMPT

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
