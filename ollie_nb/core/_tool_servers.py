"""connect_tool_servers: connect the config's MCP servers and wire the plan backend.

Priority for plans: the task server (the one `taskServer` names, else an MCP server
exposing `task_create`, ollie-tasks first) > the caller's fallback > none (in-context plans). It runs from scratch on every agent start
and switch, so the wiring always matches the servers that are really there.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ollie_nb import redaction
from ollie_nb.core._config import AgentConfig, McpServerConfig, expand_vars
from ollie_nb.core._events import Event, Notice
from ollie_nb.core._routing import Approver, TrustGate
from ollie_nb.errors import ConfigError
from ollie_nb.planning import (
    TASK_CREATE,
    AdaptedPlanBackend,
    PlanBook,
    StepStatusReader,
    TaskCaps,
    TaskClient,
    TaskServerPlanBackend,
)
from ollie_nb.tools import (
    Dispatcher,
    McpConnectError,
    McpServer,
    ReasoningServer,
    Server,
    TrustAdvice,
)

log = logging.getLogger("ollie_nb.core")


class ServerState(str, Enum):
    """Where a server stands after connecting; its value is the word `%ollie mcp` shows."""

    CONNECTED = "connected"
    FAILED = "failed"
    DISABLED = "disabled"
    BUILT_IN = "built-in"

    def __str__(self) -> str:
        return self.value

    @property
    def is_up(self) -> bool:
        """Its tools can be called: connected, or built into the agent."""
        return self in (ServerState.CONNECTED, ServerState.BUILT_IN)

    @property
    def is_failed(self) -> bool:
        return self is ServerState.FAILED


@dataclass(frozen=True)
class ServerDescription:
    """One server as `%ollie mcp` and `%ollie status` show it (its detail redacted)."""

    name: str
    state: ServerState
    transport: str = ""
    detail: str = ""
    seconds: float = 0.0
    tools: tuple[tuple[str, str], ...] = ()  # (name, first sentence of its description)
    withheld: tuple[tuple[str, str], ...] = ()  # listed by the server, not offered: why


@dataclass(frozen=True)
class ServersDescription:
    """An agent's servers and its plan wiring, as the notebook shows them."""

    servers: tuple[ServerDescription, ...] = ()
    plan_backend: str = ""
    plan_backend_reason: str = ""
    task_server: str | None = None
    messages: tuple[str, ...] = ()


@dataclass
class ServerStatus:
    """How one configured server fared at connect time."""

    name: str
    state: ServerState
    transport: str = ""
    detail: str = ""
    tools: list[str] = field(default_factory=list)
    seconds: float = 0.0
    withheld: dict[str, str] = field(default_factory=dict)  # tools not offered, and why
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # tool inputs
    program: str = ""  # the name the server gave itself at the handshake (serverInfo)


@dataclass
class ToolServers:
    """The servers an agent's tools live on (its dispatcher, the reasoning server, the MCP
    servers and their statuses) and how its plans are wired to a task server."""

    config: AgentConfig
    dispatcher: Dispatcher
    reasoning: ReasoningServer
    workdir: str
    statuses: dict[str, ServerStatus] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    plan_backend: AdaptedPlanBackend | None = None  # as the reasoning server holds it
    plan_backend_reason: str = ""
    task_server: str | None = None
    task_server_notice: str = ""  # why plans go where they go, when the user should know
    task_client: TaskClient | None = None  # the one way to call the wired task server
    status_reader: StepStatusReader | None = None  # reads step statuses of task-server plans

    @property
    def failures(self) -> list[str]:
        """One line per configured server that failed to connect: which, where, why, what to check."""
        return [f"MCP server {s.detail}" for s in self.statuses.values() if s.state.is_failed]

    async def aclose(self) -> None:
        """Close every server (MCP sessions end, subprocesses exit)."""
        await self.dispatcher.aclose()

    def describe(
        self, tools: Mapping[str, list[tuple[str, str]]], redact: Callable[[str], str]
    ) -> ServersDescription:
        """The servers (state, transport, tools) and the plan wiring, with secrets redacted."""
        built_in = ServerState.BUILT_IN
        servers = tuple(
            ServerDescription(
                name=name,
                state=status.state,
                transport=status.transport or (str(built_in) if status.state is built_in else ""),
                detail=redact(status.detail),
                seconds=round(status.seconds, 3),
                tools=tuple(tools.get(name, [])),
                withheld=tuple(sorted(status.withheld.items())),
            )
            for name, status in self.statuses.items()
        )
        return ServersDescription(
            servers=servers,
            plan_backend=self.reasoning.plan_backend_label,
            plan_backend_reason=self.plan_backend_reason,
            task_server=self.task_server,
            messages=tuple(redact(m) for m in self.messages),
        )


async def connect_tool_servers(
    config: AgentConfig,
    dispatcher: Dispatcher,
    workdir: str | os.PathLike[str],
    fallback_plan_backend: Any = None,
    *,
    builtin_servers: Mapping[str, Server] | None = None,
    environ: Mapping[str, str] | None = None,
    plans: PlanBook | None = None,
    redact: Callable[[str], str] = redaction.redact,
) -> ToolServers:
    """Connect all enabled MCP servers concurrently and wire the reasoning server's PlanBackend.

    A server that fails to connect becomes a message in `ToolServers.messages`,
    never an exception; the message and the server's status quote its stderr, so both
    are redacted here (`redact`: known secrets and key formats), before the model's note is made of
    them. `builtin_servers` (e.g. `execute`) are added as they are. The plans go into
    `plans` (the agent's PlanBook, which outlives the servers), else a new book.
    """
    workdir = os.fspath(workdir)
    reasoning = ReasoningServer(plan_timeout=config.plan_timeout, book=plans)
    dispatcher.add_server("reasoning", reasoning)
    for name, server in (builtin_servers or {}).items():
        dispatcher.add_server(name, server)
    servers = ToolServers(config, dispatcher, reasoning, workdir, messages=list(config.warnings))
    for name in ["reasoning", *(builtin_servers or {})]:
        servers.statuses[name] = ServerStatus(name, ServerState.BUILT_IN)

    base_env = dict(os.environ if environ is None else environ)
    base_env["PWD"] = workdir  # the agent's working directory, as PLANNING.md's example expects
    # The kernel's own interpreter, so `"command": "$OLLIE_PYTHON"` starts a Python server
    # (ollie-tasks) of this environment whichever Jupyter started the kernel.
    base_env.setdefault("OLLIE_PYTHON", sys.executable)
    enabled = []
    for name, server_config in config.mcp_servers.items():
        if server_config.disabled:
            servers.statuses[name] = ServerStatus(name, ServerState.DISABLED)
            continue
        if dispatcher.get_server(name) is not None:
            servers.messages.append(f"MCP server {name!r} skipped: the name is taken by a built-in")
            continue
        try:
            enabled.append(_make_server(server_config, base_env, workdir, servers.messages))
        except UnsetVariable as exc:
            servers.statuses[name] = ServerStatus(name, ServerState.FAILED, detail=str(exc))
            servers.messages.append(f"MCP server {exc}")

    await _connect_all(servers, enabled)
    servers.messages[:] = [redact(m) for m in servers.messages]
    for status in servers.statuses.values():
        status.detail = redact(status.detail)
    wire_plan_backend(servers, fallback_plan_backend)
    if servers.task_server_notice:
        servers.messages.append(servers.task_server_notice)
    return servers


def _env_hint(config: AgentConfig, name: str, error: str) -> str:
    """For a stdio server without an `env` key that started and failed: it ran in a minimal
    environment (a command that was not found never ran, so the hint would mislead)."""
    sc = config.mcp_servers[name]
    if not sc.command or sc.env or "not found" in error:
        return ""
    return (
        f" (it has no 'env' key, so it ran in a minimal environment (PATH, HOME, USER, SHELL, "
        f"TERM): if it needs variables such as API keys, add them under mcpServers.{name}.env)"
    )


def maybe_task_server(sc: McpServerConfig) -> bool:
    """Whether a configured server looks like a task server (its name or command says so)."""
    words = " ".join([sc.name, sc.command, *sc.args, sc.url]).lower()
    return "task" in words


async def _connect_all(servers: ToolServers, mcp: list[McpServer]) -> None:
    """Connect the MCP servers concurrently; each one's status (and any failure) lands in
    `servers`."""
    config, dispatcher, enabled = servers.config, servers.dispatcher, mcp
    results = await asyncio.gather(*(_connect(s) for s in enabled))
    for server, (error, seconds) in zip(enabled, results):
        status = ServerStatus(server.name, ServerState.CONNECTED, server.transport, seconds=seconds)
        if error:
            status.detail = error + _env_hint(config, server.name, error)
            status.state = ServerState.FAILED
            servers.messages.append(f"MCP server {status.detail}")
        else:
            dispatcher.add_server(server.name, server)
            try:
                infos = await server.list_tools()
                status.tools = [t.name for t in infos]
                status.schemas = {t.name: t.input_schema for t in infos}
                status.program = server.program
                status.withheld = dict(server.withheld)
                servers.messages.extend(
                    f"MCP server {server.name}: tool {tool!r} is not offered: {why}"
                    for tool, why in server.withheld.items()
                )
                if server.listing_notice:
                    servers.messages.append(server.listing_notice)
            except Exception as exc:
                status.state, status.detail = ServerState.FAILED, f"listing tools: {exc}"
                servers.messages.append(f"MCP server {server.name}: could not list tools: {exc}")
                dispatcher.remove_server(server.name)
                await server.aclose()
        servers.statuses[server.name] = status


class UnsetVariable(ConfigError):
    """A `$VAR` without a default is unset where an empty value would change what runs."""


def _make_server(
    sc: McpServerConfig, base_env: Mapping[str, str], workdir: str, messages: list[str]
) -> McpServer:
    """The server of a config entry, `$VAR`s expanded; UnsetVariable for a path-like field.

    `${NOPE}/x/tasks.db` must not become `/x/tasks.db`: an unset variable in command,
    args, cwd or url is refused unless written with a default (`${NOPE:-...}`).
    """
    unset: list[str] = []
    strict: Callable[[str], str] = lambda text: expand_vars(text, base_env, unset)  # noqa: E731
    command, args = strict(sc.command), [strict(a) for a in sc.args]
    cwd, url = strict(sc.cwd), strict(sc.url)
    if unset:
        names = ", ".join(f"${name}" for name in unset)
        raise UnsetVariable(
            f"{sc.name}: {names} is not set (used in its command, args, cwd or url); set it, "
            f"or give a default as ${{{unset[0]}:-VALUE}}"
        )
    missing: list[str] = []
    expand: Callable[[str], str] = lambda text: expand_vars(text, base_env, missing)  # noqa: E731
    server = McpServer(
        sc.name,
        command=command or None,
        args=args,
        env={k: expand(v) for k, v in sc.env.items()},
        cwd=cwd or workdir,
        url=url or None,
        headers={k: expand(v) for k, v in sc.headers.items()},
        call_timeout=sc.timeout,
        connect_timeout=sc.connect_timeout,
        credentials_hint=_credentials_hint(sc),
    )
    if missing:
        names = ", ".join(f"${m}" for m in missing)
        messages.append(
            f"MCP server {sc.name}: {names} not set in the environment (expanded empty)"
        )
    return server


def _credentials_hint(sc: McpServerConfig) -> str:
    """Where an HTTP server's credentials come from: header names and the $VARs they use.

    Never the values: a token written into the agent file must not reach a message.
    """
    if not sc.url:
        return ""
    if not sc.headers:
        return (
            f"no headers are set: give the token as mcpServers.{sc.name}.headers, "
            'e.g. {"Authorization": "Bearer ${TOKEN}"}'
        )
    sources = []
    for key, template in sc.headers.items():
        names: list[str] = []
        expand_vars(template, {}, names)
        sources.append(key + (f" from {', '.join('$' + n for n in names)}" if names else ""))
    return f"the headers come from mcpServers.{sc.name}.headers ({'; '.join(sources)})"


async def _connect(server: McpServer) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        await server.connect()
    except McpConnectError as exc:
        return str(exc), time.perf_counter() - start
    except Exception as exc:  # a connect bug must never stop the other servers
        log.exception("connecting %s", server.name)
        return f"{server.name}: {exc}", time.perf_counter() - start
    return "", time.perf_counter() - start


OLLIE_TASKS = "ollie-tasks"  # the task server of this package: its program and serverInfo name


@dataclass(frozen=True)
class TaskServerChoice:
    """Which server holds plans (None: none), why, and what the user is told ("": nothing)."""

    name: str | None
    reason: str
    notice: str = ""


def is_ollie_tasks(sc: McpServerConfig | None) -> bool:
    """Whether a configured server runs this package's task server (`ollie-tasks` or
    `python -m ollie_nb.tasks`): known from the agent file, not from what the server says."""
    if sc is None or not sc.command:
        return False
    return os.path.basename(sc.command) == OLLIE_TASKS or "ollie_nb.tasks" in sc.args


def choose_task_server(
    servers: Mapping[str, ServerStatus], config: AgentConfig
) -> TaskServerChoice:
    """The task server: the one `taskServer` names, else ollie-tasks (the agent file's, then
    one that calls itself so), else the first listing task_create; a notice when the choice
    rests on the tools alone or others offer task_create too."""
    offering = [s.name for s in servers.values() if s.state.is_up and TASK_CREATE in s.tools]
    named = config.task_server
    if named:
        if named in offering:
            return TaskServerChoice(named, f"the agent file's taskServer names '{named}'")
        why = f"taskServer '{named}' is not connected or lists no {TASK_CREATE}"
        return TaskServerChoice(None, why, f"no plans go to a task server: {why}")
    if not offering:
        return TaskServerChoice(None, f"no MCP server exposes {TASK_CREATE}")

    def rank(name: str) -> int:
        if is_ollie_tasks(config.mcp_servers.get(name)):
            return 0
        return 1 if servers[name].program == OLLIE_TASKS else 2

    chosen = min(offering, key=rank)  # min keeps the first of equals: mcpServers order
    reason = f"MCP server '{chosen}' exposes {TASK_CREATE}"
    others = ", ".join(f"'{n}'" for n in offering if n != chosen)
    if others:
        why = "it is ollie-tasks" if rank(chosen) < 2 else "it comes first in mcpServers"
        why = f"chosen over {others}: {why}"
    elif rank(chosen) == 2:
        why = "it is not ollie-tasks: chosen by its tools alone"
    else:
        return TaskServerChoice(chosen, reason)
    notice = f"plans go to MCP server '{chosen}' ({why}); {TASK_SERVER_KEY_HINT}"
    return TaskServerChoice(chosen, f"{reason}; {why}", notice)


TASK_SERVER_KEY_HINT = "the agent file's taskServer names the server that holds plans"


def wire_plan_backend(servers: ToolServers, fallback: Any) -> None:
    """Wire the reasoning server: task server > fallback > none, noting why."""
    servers.task_server = servers.task_client = servers.status_reader = None
    choice = choose_task_server(servers.statuses, servers.config)
    task_server, servers.task_server_notice = choice.name, choice.notice
    failed = [
        s
        for s in servers.statuses.values()
        if s.state is ServerState.FAILED
        and s.name in servers.config.mcp_servers
        and maybe_task_server(servers.config.mcp_servers[s.name])
    ]
    if task_server is not None:
        server = servers.dispatcher.get_server(task_server)
        client = TaskClient(
            servers.dispatcher.dispatch,
            task_server,
            task_caps(servers, task_server),
            updates=getattr(server, "resource_updates", None),
        )
        backend: Any = TaskServerPlanBackend(client, can_delete=client.caps.delete)
        servers.task_server, servers.task_client = task_server, client
        servers.status_reader = backend
        servers.plan_backend_reason = choice.reason
    elif fallback is not None:
        backend = fallback
        servers.plan_backend_reason = f"{choice.reason}; the fallback is used"
    else:
        backend = None
        servers.plan_backend_reason = f"{choice.reason} and no fallback is set"
    if task_server is None and failed:
        names = ", ".join(f"'{s.name}'" for s in failed)
        servers.plan_backend_reason += f" (failed to connect: {names})"
        servers.reasoning.unreachable_note = (
            f"MCP server {names} failed to connect ({failed[0].detail})"
        )
    servers.reasoning.set_plan_backend(backend)
    servers.plan_backend = servers.reasoning.plan_backend


def task_caps(servers: ToolServers, server: str) -> TaskCaps:
    """What the task server offers, read once from the tools it listed at connect time."""
    status, found = servers.statuses[server], servers.dispatcher.get_server(server)
    schemas = {name: status.schemas.get(name, {}) for name in status.tools}
    return TaskCaps.of(schemas, subscriptions=hasattr(found, "resource_updates"))


def gate_for(
    servers: ToolServers | None,
    trusted: tuple[str, ...] | None,
    approve: Approver | None,
    emit: Callable[[Event], None],
    known_secrets: Callable[[], Sequence[str]] = tuple,
    reviewing: Callable[[], bool] = lambda: False,
) -> TrustGate:
    """The trust gate of an servers: its built-ins, its task server, the servers' own advice."""

    def builtin_of(server: str) -> str | None:
        status = servers.statuses.get(server) if servers else None
        return server if status is not None and status.state is ServerState.BUILT_IN else None

    def advice(server: str, tool: str) -> Any:
        found = servers.dispatcher.get_server(server) if servers else None
        return found.tool_trust(tool) if isinstance(found, TrustAdvice) else None

    return TrustGate(
        trusted,
        approve,
        builtin_of,
        servers.task_server if servers else None,
        lambda message: emit(Notice(message, "error")),
        advice,
        known_secrets,
        reviewing,
    )
