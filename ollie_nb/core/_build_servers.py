"""The environment an agent's turns run in, built from its config: servers, tool router, hooks.

`build_servers` connects the agent config's servers with the built-in ones (sub-agents,
execute_code, a frontend's extras), wires the plan backend, lists the tools and runs
the agentSpawn hooks; the agent hands it the values it needs and keeps what comes back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ollie_nb.core._config import AgentConfig
from ollie_nb.core._hooks import spawn_hooks
from ollie_nb.core._plans import Plans
from ollie_nb.core._routing import ToolRouter
from ollie_nb.core._secrets import Redactor
from ollie_nb.core._subagents import SubAgents, SubagentTools
from ollie_nb.core._tool_servers import ToolServers, connect_tool_servers
from ollie_nb.planning import PlanRecord
from ollie_nb.tools import Dispatcher, ExecuteServer, Server, SubagentServer, subprocess_environ

ExtraServers = Mapping[str, Server] | Callable[[AgentConfig], Mapping[str, Server]]
"""Built-in servers a frontend adds (the notebook's `notebook` and `python`): a mapping, or
a function of the agent config called at every start and switch."""


@dataclass(frozen=True)
class BuiltServers:
    """What a build gives the agent: the servers, its tool router, the spawn hooks' context."""

    servers: ToolServers
    router: ToolRouter
    spawn_context: list[str]


async def build_servers(
    config: AgentConfig,
    workdir: Callable[[], str],
    fallback: Any,
    *,
    subagents: SubAgents,
    execute: bool,
    extra: ExtraServers | None,
    plans: Plans,
    redact: Redactor,
    session_id: str,
    on_plan: Callable[[PlanRecord], None],
    hold_plans: Callable[[], bool],
) -> BuiltServers:
    """Connect the servers, wire plans and their review, list the tools, run agentSpawn hooks."""
    builtins: dict[str, Any] = {"subagent": SubagentServer(SubagentTools(subagents))}
    if execute:
        builtins["execute"] = ExecuteServer(
            workdir, env_passthrough=config.pass_env, secrets=redact.values
        )
    builtins.update((extra(config) if callable(extra) else extra) or {})
    servers = await connect_tool_servers(
        config,
        Dispatcher(redact=redact.known_only),
        workdir(),
        fallback,
        builtin_servers=builtins,
        plans=plans.book,
        redact=redact,
    )
    servers.reasoning.add_plan_listener(on_plan)
    servers.reasoning.hold_plans = hold_plans
    client = servers.task_client
    router = ToolRouter(servers.dispatcher, task_server=servers.task_server or "")
    if client is not None:  # the model's task_* calls carry the claims the agent made
        router.held = client.held
    try:
        await router.refresh()
        hook_env = subprocess_environ(secrets=redact.values(), passthrough=config.pass_env)
        context, warnings = await spawn_hooks(config, workdir(), session_id, hook_env)
    except BaseException:  # half-built servers are nobody's to close: close them here
        await servers.aclose()
        raise
    servers.messages.extend(warnings)  # with the servers' failures: shown as they are
    servers.messages[:] = [redact(m) for m in servers.messages]
    return BuiltServers(servers, router, [redact(c) for c in context])
