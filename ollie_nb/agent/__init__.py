"""The agent core: config, environment wiring, turn loop, sessions, hooks."""

from ollie_nb.agent._config import (
    AgentConfig,
    ConfigError,
    McpServerConfig,
    expand_vars,
    load_agent_config,
)
from ollie_nb.agent._core import AgentCore, Approver, UsageTotals, agent_dirs, list_agents
from ollie_nb.agent._env import AgentEnv, ServerStatus, build_agent_env
from ollie_nb.agent._events import Event, EventSink, TurnResult
from ollie_nb.agent._sessions import SessionError, SessionInfo, list_sessions, sessions_dir

__all__ = [
    "AgentConfig",
    "AgentCore",
    "AgentEnv",
    "Approver",
    "ConfigError",
    "Event",
    "EventSink",
    "McpServerConfig",
    "ServerStatus",
    "SessionError",
    "SessionInfo",
    "TurnResult",
    "UsageTotals",
    "agent_dirs",
    "build_agent_env",
    "expand_vars",
    "list_agents",
    "list_sessions",
    "load_agent_config",
    "sessions_dir",
]
