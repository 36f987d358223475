"""The agent core: config, environment wiring, turn loop, sessions, hooks.

Frontend-agnostic: a script drives AgentCore with asyncio. `ollie_nb.agent()` (calling
this module) returns the notebook kernel's agent handle.
"""

import sys
import types
from typing import Any

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


class _CallableModule(types.ModuleType):
    """`ollie_nb.agent` is the core package; calling it gives the kernel's agent handle."""

    def __call__(self) -> Any:
        from ollie_nb.notebook import agent

        return agent()


sys.modules[__name__].__class__ = _CallableModule
