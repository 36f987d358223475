"""`%ollie` commands about the agent and its model: help, ask, status, backend, model(s), agent(s), mcp, fallback.

Whatever touches the core runs on the runtime loop (`ctx.core_call` / `ctx.on_loop`),
never on the kernel thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ollie_nb.notebook import _state
from ollie_nb.notebook._context import CommandContext
from ollie_nb.notebook._display import Displayable, Group, NoticeView, Table, TextBlock
from ollie_nb.notebook.commands._args import (
    BACKENDS,
    CommandParser,
    agent_names,
    user_vars,
    words_of,
)
from ollie_nb.notebook.commands._registry import COMMANDS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ollie_nb.core import AgentCore, ServerDescription

command = COMMANDS.command


@command("help", "this help")
def cmd_help(ctx: CommandContext, rest: str) -> Displayable:
    return TextBlock(ctx.help_text())


@command("ask [options] TEXT", "run one line as a prompt (options as for %%ollie)")
def cmd_ask(ctx: CommandContext, rest: str) -> Any:
    return ctx.prompt("%ollie ask", rest)


@command("status", "backend, model, agent, servers, plan backend, queue, usage")
def cmd_status(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "status", most=0, usage="status")
    runtime = ctx.runtime()
    state = "running" if runtime.busy else "idle"
    problem = [("agent problem", runtime.agent_problem)] if runtime.agent_problem else []

    from ollie_nb.core import tracing  # the core: loaded with the runtime

    def rows(core: AgentCore) -> list[tuple[str, str]]:
        info = core.list_servers()
        # The server requests go to: what the troubleshooting table says to check.
        url = getattr(core.backend, "base_url", None) or getattr(core.backend, "host", None)
        return [
            ("backend", f"{core.backend.name} ({core.backend.model})"),
            *([("backend URL", core.redact(url))] if isinstance(url, str) and url else []),
            ("agent", core.config.name + (f" ({core.config.path})" if core.config.path else "")),
            *problem,
            ("work dir", core.workdir),
            ("servers", _servers_line(info.servers)),
            ("plan backend", info.plan_backend or "none (in-context plans)"),
            *([("task server", info.plan_backend_reason)] if info.task_server else []),
            ("state", state),
            ("queue", str(len(core.prompts.texts))),
            ("usage", str(core.session.usage)),
            ("tracing", core.redact(tracing().state)),
            (
                "session",
                core.session.session_id
                + (f" ({core.session.session_name})" if core.session.session_name else ""),
            ),
        ]

    return Table("ollie status", ["", ""], ctx.on_loop(rows))


def _servers_line(servers: Sequence[ServerDescription]) -> str:
    connected = [s.name for s in servers if s.state.is_up]
    failed = [s.name for s in servers if s.state.is_failed]
    return ", ".join(connected) + (f"; failed: {', '.join(failed)}" if failed else "")


@command(
    "backend [NAME [MODEL]|VAR]",
    "show or switch: " + ", ".join(BACKENDS) + ", or a Backend variable",
    words=BACKENDS,
    completer=user_vars("chat_stream"),
)
def cmd_backend(ctx: CommandContext, rest: str) -> Displayable:
    words = words_of(rest, "backend", most=2, usage="backend [NAME [MODEL] | VAR]")
    if not words:
        name, model = ctx.on_loop(lambda core: (core.backend.name, core.backend.model))
        return NoticeView(f"backend: {name}, model {model}")
    if words[0] not in BACKENDS and words[0] in ctx.shell.user_ns:
        target = ctx.shell.user_ns[words[0]]
        if len(words) > 1 or not hasattr(target, "chat_stream"):
            raise UsageError(
                f"%ollie backend: {words[0]} is not a chat backend (it is of type "
                f"{type(target).__name__}; a backend has chat_stream); "
                f"or give one of: {', '.join(BACKENDS)}"
            )
        backend = target
    else:
        from ollie_nb.llm import LLMError, make_backend  # the llm layer: on first use

        if len(words) > 1 and "://" in words[1]:
            raise UsageError(
                f"%ollie backend: {words[1]} is a URL, not a model: the syntax is "
                f"%ollie backend NAME [MODEL]; a server's URL comes from OLLIE_OPENAI_URL "
                f"(openai, openrouter) or OLLIE_OLLAMA_URL (ollama)"
            )
        try:
            backend = make_backend(words[0], model=words[1] if len(words) > 1 else None)
        except LLMError as exc:
            raise UsageError(f"%ollie backend: {exc}") from None
    ctx.on_loop(lambda core: core.set_backend(backend))
    return NoticeView(f"backend: {backend.name}, model {backend.model}")


@command("models", "the backend's models")
def cmd_models(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "models", most=0, usage="models")

    async def listing(core: AgentCore) -> tuple[list[str], str]:
        return await core.list_models(), core.backend.model

    models, current = ctx.core_call(listing)
    return Table("models", ["model", ""], [(n, "current" if n == current else "") for n in models])


@command("model NAME", "switch the model")
def cmd_model(ctx: CommandContext, rest: str) -> Displayable:
    words = words_of(rest, "model", most=1, usage="model NAME")
    if not words:
        raise UsageError("%ollie model: give a model name (see %ollie models)")

    def switch(core: AgentCore) -> str:
        core.backend.set_model(words[0])
        return core.backend.model

    return NoticeView(f"model: {ctx.on_loop(switch)}")


@command("agents", "agents found in the agents dirs")
def cmd_agents(ctx: CommandContext, rest: str) -> Displayable:
    from ollie_nb.core import agent_dirs, list_agents  # the core: on first use

    words_of(rest, "agents", most=0, usage="agents")
    name, workdir = ctx.on_loop(lambda core: (core.config.name, core.workdir))
    rows = [(n, "current" if n == name else "") for n in list_agents(workdir)]
    dirs = ", ".join(str(d) for d in agent_dirs(workdir))
    return Table("agents", ["agent", ""], rows, footer=f"looked in: {dirs}")


def _agent_parser() -> CommandParser:
    parser = CommandParser("agent")
    parser.add_argument("spec", nargs="*")
    parser.add_argument("--trust", action="store_true")
    return parser


@command(
    "agent [NAME|PATH] [--trust]",
    "show or switch the agent (servers rebuilt, fallback re-applied); --trust a project agent",
    words=("--trust",),
    completer=agent_names,
)
def cmd_agent(ctx: CommandContext, rest: str) -> Displayable:
    args = _agent_parser().parse(rest)
    spec = " ".join(args.spec)
    if not spec:
        return Table("agent", ["", ""], ctx.on_loop(_agent_rows))
    if ctx.runtime().busy:
        raise UsageError("%ollie agent: a turn is running; %ollie stop first")
    env = ctx.core_call(lambda core: core.switch_agent(spec, trust=args.trust))
    parts: list[Displayable] = [NoticeView(f"agent: {env.config.name}; {env.plan_backend_reason}")]
    parts.extend(NoticeView(message, "warning") for message in env.messages)
    return Group(*parts)


def _agent_rows(core: AgentCore) -> list[tuple[str, str]]:
    """The current agent: its name, file, servers and whether its file is trusted."""
    from ollie_nb.core._agents import agent_file_trusted, project_agent_dir  # on first use

    config, rows = core.config, [("agent", core.config.name)]
    path = config.path
    rows.append(("file", str(path) if path else "(built in: no file)"))
    rows.append(("servers", _servers_line(core.list_servers().servers) or "none"))
    if path:
        from pathlib import Path

        local = Path(path).resolve().is_relative_to(project_agent_dir(core.workdir).resolve())
        trust = "trusted" if agent_file_trusted(Path(path)) else "not trusted"
        rows.append(
            ("trust", f"project agent, {trust}" if local else "the user's own (no trust needed)")
        )
    tools = config.trusted_tools
    rows.append(("trustedTools", ", ".join(tools) if tools is not None else "none"))
    return rows


@command("mcp", "servers, their tools, which plan backend is wired and why")
def cmd_mcp(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "mcp", most=0, usage="mcp")
    info = ctx.on_loop(lambda core: core.list_servers())
    rows = []
    for server in info.servers:
        tools = ", ".join(name for name, _ in server.tools)
        state = str(server.state) + (f": {server.detail}" if server.detail else "")
        rows.append((server.name, server.transport or "-", state, tools))
    footer = f"plan backend: {info.plan_backend or 'none'} ({info.plan_backend_reason})"
    parts: list[Displayable] = [
        Table("MCP and built-in servers", ["server", "transport", "state", "tools"], rows, footer)
    ]
    parts.extend(NoticeView(message, "warning") for message in info.messages)
    return Group(*parts)


@command(
    "fallback [VAR|queue|off]",
    "plug a notebook-defined PlanBackend (object with create_plan, or a function)",
    words=("queue", "off"),
    completer=user_vars("create_plan"),
)
def cmd_fallback(ctx: CommandContext, rest: str) -> Displayable:
    words = words_of(rest, "fallback", most=1, usage="fallback [VAR | queue | off]")
    if not words:
        return NoticeView(f"fallback: {ctx.on_loop(_fallback_label)}")
    if words[0] in ("off", "queue"):
        use_queue = words[0] == "queue"

        async def switch(core: AgentCore) -> None:
            core.plans.queue_fallback = use_queue
            await core.plans.set_fallback(None)

        ctx.core_call(switch)
        if not use_queue:
            return NoticeView(
                "fallback: none (plans stay in context unless a task server is wired)"
            )
        return NoticeView(_wiring_note(ctx, "the prompt queue"))
    target = ctx.user_value(words[0], "fallback")
    try:
        backend = _state.notebook_plan_backend(target, ctx.runtime())
    except TypeError as exc:
        raise UsageError(f"%ollie fallback: {exc}") from None
    ctx.core_call(lambda core: core.plans.set_fallback(backend))
    return NoticeView(_wiring_note(ctx, backend.label))


def _fallback_label(core: AgentCore) -> str:
    current = core.plans.fallback
    if current is not None:
        return getattr(current, "label", None) or type(current).__name__
    return "the prompt queue" if core.plans.queue_fallback else "none"


def _wiring_note(ctx: CommandContext, label: str) -> str:
    server = ctx.on_loop(lambda core: core.servers.task_server if core.servers else None)
    if server:
        return (
            f"fallback set to {label}; the task server '{server}' still takes "
            "priority while it is connected"
        )
    return f"fallback set to {label}: plans go there from the next reasoning_plan"
