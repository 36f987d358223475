"""The agent core: config, environment wiring, turn loop, sessions, hooks."""

from ollie_nb.agent._config import (
    AgentConfig,
    ConfigError,
    McpServerConfig,
    expand_vars,
    load_agent_config,
)
from ollie_nb.agent._env import AgentEnv, ServerStatus, build_agent_env

__all__ = [
    "AgentConfig",
    "AgentEnv",
    "ConfigError",
    "McpServerConfig",
    "ServerStatus",
    "build_agent_env",
    "expand_vars",
    "load_agent_config",
]
