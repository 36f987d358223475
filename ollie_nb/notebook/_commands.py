"""The `%ollie COMMAND` handlers: parse the rest of the line, ask the core, return a displayable.

Each handler is registered in the one command registry (`_registry.COMMANDS`), from
which dispatch, help, completion and suggestions are derived. Whatever touches the
core runs on the runtime loop (`m.core_call` / `m.on_loop`), never on the kernel thread.
"""

from __future__ import annotations

import os
from typing import Any

from IPython.core.error import UsageError

from ollie_nb.notebook._display import Displayable, Group, Notice, Table, TextBlock
from ollie_nb.notebook._registry import COMMANDS

command = COMMANDS.command
BACKENDS = ("offline", "openai", "openrouter", "anthropic", "ollama")
TASK_STATUSES = ("open", "ready", "all", "in_progress", "done", "failed")


def words_of(rest: str, prog: str, *, most: int, usage: str) -> list[str]:
    """The words of an argument line, at most `most` of them (else a UsageError)."""
    words = rest.split()
    if len(words) > most:
        raise UsageError(f"%ollie {prog}: too many words {rest!r}; usage: %ollie {usage}")
    return words


def _user_vars(kind: str) -> Any:
    def complete(shell: Any) -> list[str]:
        import inspect

        found = []
        for name, value in shell.user_ns.items():
            if name.startswith("_") or isinstance(value, type):
                continue
            if hasattr(value, kind) or (kind == "create_plan" and inspect.isfunction(value)):
                found.append(name)
        return found

    return complete


def _agent_names(shell: Any) -> list[str]:
    from ollie_nb.core import list_agents

    return list_agents(os.getcwd())


def _session_ids(shell: Any) -> list[str]:
    from ollie_nb.core import list_sessions

    return [s.id for s in list_sessions()[:20]]


# -- the agent and its model ---------------------------------------------------------------


@command("help", "this help")
def cmd_help(m: Any, rest: str) -> Displayable:
    return TextBlock(m.help_text())


@command("ask [options] TEXT", "run one line as a prompt (options as for %%ollie)")
def cmd_ask(m: Any, rest: str) -> Any:
    return m.prompt("%ollie ask", rest)


@command("status", "backend, model, agent, servers, plan backend, queue, usage")
def cmd_status(m: Any, rest: str) -> Displayable:
    words_of(rest, "status", most=0, usage="status")
    info = m.core_call(_list_servers)
    core = m.runtime().core
    connected = [s["name"] for s in info["servers"] if s["state"] in ("connected", "built-in")]
    failed = [s["name"] for s in info["servers"] if s["state"] == "failed"]
    servers = ", ".join(connected) + (f"; failed: {', '.join(failed)}" if failed else "")
    # The server requests go to: what the troubleshooting table says to check.
    url = getattr(core.backend, "base_url", None) or getattr(core.backend, "host", None)
    rows = [
        ("backend", f"{core.backend.name} ({core.backend.model})"),
        *([("backend URL", core.redact(url))] if isinstance(url, str) and url else []),
        ("agent", core.config.name + (f" ({core.config.path})" if core.config.path else "")),
        ("work dir", core.workdir),
        ("servers", servers),
        ("plan backend", info["plan_backend"] or "none (in-context plans)"),
        ("state", "running" if m.runtime().busy else "idle"),
        ("queue", str(len(core.queued))),
        ("usage", str(core.usage)),
        ("session", core.session_id + (f" ({core.session_name})" if core.session_name else "")),
    ]
    return Table("ollie status", ["", ""], rows)


@command(
    "backend [NAME [MODEL]|VAR]",
    "show or switch: " + ", ".join(BACKENDS) + ", or a Backend variable",
    words=BACKENDS,
    completer=_user_vars("chat_stream"),
)
def cmd_backend(m: Any, rest: str) -> Displayable:
    words = words_of(rest, "backend", most=2, usage="backend [NAME [MODEL] | VAR]")
    if not words:
        backend = m.runtime().core.backend
        return Notice(f"backend: {backend.name}, model {backend.model}")
    if words[0] not in BACKENDS and words[0] in m.shell.user_ns:
        target = m.shell.user_ns[words[0]]
        if len(words) > 1 or not hasattr(target, "chat_stream"):
            raise UsageError(
                f"%ollie backend: {words[0]} is not a chat backend (it is of type "
                f"{type(target).__name__}; a backend has chat_stream); "
                f"or give one of: {', '.join(BACKENDS)}"
            )
        backend = target
    else:
        from ollie_nb.llm import LLMError, make_backend

        try:
            backend = make_backend(words[0], model=words[1] if len(words) > 1 else None)
        except LLMError as exc:
            raise UsageError(f"%ollie backend: {exc}") from None
    m.on_loop(lambda core: core.set_backend(backend))
    return Notice(f"backend: {backend.name}, model {backend.model}")


@command("models", "the backend's models")
def cmd_models(m: Any, rest: str) -> Displayable:
    words_of(rest, "models", most=0, usage="models")
    models = m.core_call(lambda core: core.list_models())
    current = m.runtime().core.backend.model
    return Table("models", ["model", ""], [(n, "current" if n == current else "") for n in models])


@command("model NAME", "switch the model")
def cmd_model(m: Any, rest: str) -> Displayable:
    words = words_of(rest, "model", most=1, usage="model NAME")
    if not words:
        raise UsageError("%ollie model: give a model name (see %ollie models)")
    model = m.on_loop(lambda core: core.backend.set_model(words[0]) or core.backend.model)
    return Notice(f"model: {model}")


@command("agents", "agents found in the agents dirs")
def cmd_agents(m: Any, rest: str) -> Displayable:
    from ollie_nb.core import agent_dirs, list_agents

    words_of(rest, "agents", most=0, usage="agents")
    core = m.runtime().core
    rows = [(n, "current" if n == core.config.name else "") for n in list_agents(core.workdir)]
    dirs = ", ".join(str(d) for d in agent_dirs(core.workdir))
    return Table("agents", ["agent", ""], rows, footer=f"looked in: {dirs}")


@command(
    "agent [NAME|PATH] [--trust]",
    "show or switch the agent (servers rebuilt, fallback re-applied); --trust a project agent",
    words=("--trust",),
    completer=_agent_names,
)
def cmd_agent(m: Any, rest: str) -> Displayable:
    spec, trust = rest.removesuffix("--trust").strip(), rest.endswith("--trust")
    if not spec:
        return Notice(f"agent: {m.runtime().core.config.name}")
    if m.runtime().busy:
        raise UsageError("%ollie agent: a turn is running; %ollie stop first")
    env = m.core_call(lambda core: core.switch_agent(spec, trust=trust))
    parts: list[Displayable] = [Notice(f"agent: {env.config.name}; {env.plan_backend_reason}")]
    parts.extend(Notice(message, "warning") for message in env.messages)
    return Group(*parts)


@command("mcp", "servers, their tools, which plan backend is wired and why")
def cmd_mcp(m: Any, rest: str) -> Displayable:
    words_of(rest, "mcp", most=0, usage="mcp")
    info = m.core_call(_list_servers)
    rows = []
    for server in info["servers"]:
        tools = ", ".join(name for name, _ in server["tools"])
        state = server["state"] + (f": {server['detail']}" if server["detail"] else "")
        rows.append((server["name"], server["transport"] or "-", state, tools))
    footer = f"plan backend: {info['plan_backend'] or 'none'} ({info['plan_backend_reason']})"
    parts: list[Displayable] = [
        Table("MCP and built-in servers", ["server", "transport", "state", "tools"], rows, footer)
    ]
    parts.extend(Notice(message, "warning") for message in info.get("messages", []))
    return Group(*parts)


@command(
    "fallback [VAR|queue|off]",
    "plug a notebook-defined PlanBackend (object with create_plan, or a function)",
    words=("queue", "off"),
    completer=_user_vars("create_plan"),
)
def cmd_fallback(m: Any, rest: str) -> Displayable:
    words = words_of(rest, "fallback", most=1, usage="fallback [VAR | queue | off]")
    runtime = m.runtime()
    if not words:
        current = runtime.core.fallback_plan_backend
        if current is not None:
            label = getattr(current, "label", None) or type(current).__name__
        else:
            label = "the prompt queue" if runtime.core.queue_fallback else "none"
        return Notice(f"fallback: {label}")
    if words[0] in ("off", "queue"):
        use_queue = words[0] == "queue"

        async def switch(core: Any) -> None:
            core.queue_fallback = use_queue
            await core.set_fallback_plan_backend(None)

        m.core_call(switch)
        if not use_queue:
            return Notice("fallback: none (plans stay in context unless a task server is wired)")
        return Notice(_wiring_note(m, "the prompt queue"))
    target = m.user_value(words[0], "fallback")
    from ollie_nb.notebook import notebook_plan_backend

    try:
        backend = notebook_plan_backend(target, runtime)
    except TypeError as exc:
        raise UsageError(f"%ollie fallback: {exc}") from None
    m.core_call(lambda core: core.set_fallback_plan_backend(backend))
    return Notice(_wiring_note(m, backend.label))


def _wiring_note(m: Any, label: str) -> str:
    env = m.runtime().core.env
    if env is not None and env.task_server:
        return (
            f"fallback set to {label}; the task server '{env.task_server}' still takes "
            "priority while it is connected"
        )
    return f"fallback set to {label}: plans go there from the next reasoning_plan"


async def _list_servers(core: Any) -> dict[str, Any]:
    return core.list_servers()
