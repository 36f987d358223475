"""`%ollie` / `%%ollie`: parse, call the runtime, return a displayable. Logic lives in the core."""

from __future__ import annotations

import argparse
import difflib
import inspect
import os
import shlex
import time
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display
from traitlets import Bool, Enum, Float, Int, Unicode

from ollie_nb.notebook._display import Displayable, Group, Notice, Table, TextBlock

HELP = """\
%%ollie [--bg] [--inject] [--agent NAME] [--model M] [-i]   run the cell as a prompt
%ollie ask [options] TEXT        run one line as a prompt (same options)

Commands (%ollie COMMAND):
  help                    this help
  status                  backend, model, agent, servers, plan backend, queue, usage
  backend [NAME|VAR]      show or switch: offline, openai, openrouter, anthropic, ollama, or a Backend variable
  models | model NAME     list models / switch model
  agents | agent NAME|PATH   list agents / switch agent (servers rebuilt, fallback re-applied)
  mcp                     servers, their tools, which plan backend is wired and why
  fallback [VAR|queue|off]   plug a notebook-defined PlanBackend (object with create_plan, or a function)
  plan [N|ID] [--watch S] graph of the latest (or a given) plan with live step status
  plans                   every plan of this session
  tasks [STATUS]          the task server's tasks (open, ready, all, done, ...)
  queue [clear]           queued prompts
  run [--bg]              work the queued prompts now (one turn each)
  watch [on|off] [--interval S]   queue each step of your plans that becomes ready on the task server
  stop                    interrupt the running turn
  compact | context | usage | history [N] | clear
  sessions | resume ID | rename NAME | save
  cwd [DIR]               show or change the work dir (execute_code, hooks)

Options are also settable with %config OllieMagics.<name> (see %config OllieMagics)."""

COMMANDS = [
    "help",
    "status",
    "ask",
    "backend",
    "models",
    "model",
    "agents",
    "agent",
    "mcp",
    "fallback",
    "plan",
    "plans",
    "tasks",
    "queue",
    "stop",
    "compact",
    "context",
    "usage",
    "history",
    "clear",
    "sessions",
    "resume",
    "rename",
    "save",
    "cwd",
]


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError (one red line) instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"%ollie {self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise UsageError(message or f"%ollie {self.prog}: bad arguments")


def _prompt_parser(prog: str) -> _Parser:
    parser = _Parser(prog=prog, add_help=False)
    parser.add_argument("--bg", action="store_true")
    parser.add_argument("--inject", action="store_true")
    parser.add_argument("--agent")
    parser.add_argument("--model")
    parser.add_argument("-i", "--interpolate", action="store_true")
    parser.add_argument("text", nargs=argparse.REMAINDER)
    return parser


@magics_class
class OllieMagics(Magics):
    """The `%ollie` magics; every option is a trait (`%config OllieMagics.rankdir = 'TB'`)."""

    backend = Unicode(
        "",
        help="Chat backend at start: offline, openai, openrouter, anthropic, ollama; '' reads the environment.",
    ).tag(config=True)
    model = Unicode("", help="Model name at start ('' = the backend's default).").tag(config=True)
    agent = Unicode(
        "", help="Agent at start: a name in the agents dirs or a JSON path ('' = default)."
    ).tag(config=True)
    workdir = Unicode("", help="Work dir at start ('' = the kernel's cwd).").tag(config=True)
    fallback = Unicode("", help="Fallback PlanBackend at start: '' (none) or 'queue'.").tag(
        config=True
    )
    rankdir = Enum(["LR", "TB", "RL", "BT"], "LR", help="Plan graph direction.").tag(config=True)
    show_tools = Bool(True, help="Show tool calls and results.").tag(config=True)
    result_chars = Int(2000, help="Characters of a tool result shown before cutting.").tag(
        config=True
    )
    stream_interval = Float(0.1, help="Seconds between streaming display updates.").tag(config=True)
    usage_footer = Bool(True, help="Show the usage line under each turn.").tag(config=True)
    interpolate = Bool(
        False, help="Format {var} from the user namespace in prompts by default."
    ).tag(config=True)
    approval = Enum(
        ["ask", "allow", "deny"],
        "ask",
        help="Tools outside trustedTools: ask (input prompt), allow, or deny.",
    ).tag(config=True)
    offline_chunk_delay = Float(
        0.0, help="Seconds between words of the offline model's replies."
    ).tag(config=True)

    # -- entry point ---------------------------------------------------------

    @line_cell_magic
    def ollie(self, line: str = "", cell: str | None = None) -> Any:
        """Run the agent: `%%ollie` for a cell prompt, `%ollie COMMAND` for everything else."""
        if cell is not None:
            return self._prompt(_prompt_parser("%%ollie"), line, cell)
        line = line.strip()
        quiet = line.endswith(";")  # IPython's displayhook cannot see a ; inside a magic line
        line = line.removesuffix(";").rstrip()
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"%ollie: {exc}") from None
        if not words:
            return TextBlock(HELP)
        command, rest = words[0], line.strip()[len(words[0]) :].strip()
        handler = getattr(self, f"_cmd_{command}", None)
        if handler is None:
            close = difflib.get_close_matches(command, COMMANDS, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else "; see %ollie help"
            raise UsageError(f"%ollie: unknown command '{command}'{hint}")
        result = handler(rest)
        return None if quiet else result

    # -- runtime -------------------------------------------------------------

    def runtime(self) -> Any:
        from ollie_nb.notebook import runtime_for

        return runtime_for(self)

    def core_call(self, fn: Callable[[Any], Any]) -> Any:
        """Run `await fn(core)` on the runtime and return its result (Ctrl-C cancels)."""
        runtime = self.runtime()
        try:
            return runtime.call(lambda: fn(runtime.core))
        except UsageError:
            raise
        except KeyboardInterrupt:
            raise UsageError("%ollie: interrupted") from None
        except Exception as exc:
            raise UsageError(f"%ollie: {_one_line(exc)}") from None

    # -- prompts -------------------------------------------------------------

    def _prompt(self, parser: _Parser, line: str, cell: str | None = None) -> Any:
        try:
            args = parser.parse_args(shlex.split(line))
        except ValueError as exc:
            raise UsageError(f"%ollie: {exc}") from None
        text = cell if cell is not None else " ".join(args.text)
        if cell is not None and args.text:
            raise UsageError(f"%%ollie: unexpected words on the magic line: {' '.join(args.text)}")
        if not text.strip():
            raise UsageError("%ollie: the prompt is empty")
        if args.interpolate or self.interpolate:
            try:
                text = text.format(**self.shell.user_ns)
            except (KeyError, IndexError, ValueError, AttributeError) as exc:
                raise UsageError(f"%ollie -i: cannot format the prompt: {_one_line(exc)}") from None
        runtime = self.runtime()
        if args.agent:
            self._cmd_agent(args.agent)
        if args.model:
            self._cmd_model(args.model)
        if runtime.busy:
            if args.inject:
                runtime.call_soon(lambda: runtime.core.inject(text))
                return Notice("injected into the running turn")
            position = runtime.call(_queue_coro(runtime.core, text))
            return Notice(f"a turn is running; queued as #{position}")
        if args.bg:
            from ollie_nb.notebook._widgets import start_background_turn

            return start_background_turn(self, runtime, text)
        return self._foreground(runtime, text)

    def _foreground(self, runtime: Any, text: str) -> None:
        from ollie_nb.notebook._render import TurnView

        view = TurnView(self.settings(), _show, _live_display, self._statuses_on_main(runtime))
        try:
            runtime.run_turn(text, view, tick=view.tick)
        except KeyboardInterrupt:
            view.finish()
            display(Notice("interrupted; the turn did not wind down in time", "warning"))
            return None
        except Exception as exc:
            view.finish()
            raise UsageError(f"%ollie: {_one_line(exc)}") from None
        view.finish()
        return None

    def _statuses_on_main(self, runtime: Any) -> Callable[[Any], dict[str, str]]:
        def statuses(record: Any) -> dict[str, str]:
            # Wait without pumping: this runs inside the pump, which must not re-enter the view.
            future = runtime.submit(lambda: runtime.core.plan_statuses(record))
            try:
                return future.result(timeout=10)
            except Exception:
                future.cancel()
                return {}

        return statuses

    def settings(self) -> Any:
        from ollie_nb.notebook._render import Settings

        return Settings(
            show_tools=self.show_tools,
            result_chars=self.result_chars,
            stream_interval=self.stream_interval,
            rankdir=self.rankdir,
            usage_footer=self.usage_footer,
        )

    # -- commands ------------------------------------------------------------

    def _cmd_help(self, rest: str) -> Displayable:
        return TextBlock(HELP)

    def _cmd_ask(self, rest: str) -> Any:
        return self._prompt(_prompt_parser("ask"), rest)

    def _cmd_status(self, rest: str) -> Displayable:
        core = self.runtime().core
        info = self.core_call(_list_servers)
        connected = [s["name"] for s in info["servers"] if s["state"] in ("connected", "built-in")]
        failed = [s["name"] for s in info["servers"] if s["state"] == "failed"]
        rows = [
            ("backend", f"{core.backend.name} ({core.backend.model})"),
            ("agent", core.config.name + (f" ({core.config.path})" if core.config.path else "")),
            ("work dir", core.workdir),
            (
                "servers",
                ", ".join(connected) + (f"; failed: {', '.join(failed)}" if failed else ""),
            ),
            ("plan backend", info["plan_backend"] or "none (in-context plans)"),
            ("state", "running" if self.runtime().busy else "idle"),
            ("queue", str(len(core.queued))),
            ("usage", str(core.usage)),
            ("session", core.session_id + (f" ({core.session_name})" if core.session_name else "")),
        ]
        return Table("ollie status", ["", ""], rows)

    def _cmd_backend(self, rest: str) -> Displayable:
        runtime = self.runtime()
        if not rest:
            backend = runtime.core.backend
            return Notice(f"backend: {backend.name}, model {backend.model}")
        target = self.shell.user_ns.get(rest) if rest.isidentifier() else None
        if target is not None and hasattr(target, "chat_stream"):
            backend = target
        else:
            from ollie_nb.llm import LLMError, make_backend

            name, _, model = rest.partition(" ")
            try:
                backend = make_backend(name.strip(), model=model.strip() or None)
            except LLMError as exc:
                raise UsageError(f"%ollie backend: {exc}") from None
        runtime.core.set_backend(backend)
        return Notice(f"backend: {backend.name}, model {backend.model}")

    def _cmd_models(self, rest: str) -> Displayable:
        models = self.core_call(lambda core: core.list_models())
        current = self.runtime().core.backend.model
        return Table(
            "models", ["model", ""], [(m, "current" if m == current else "") for m in models]
        )

    def _cmd_model(self, rest: str) -> Displayable:
        if not rest:
            raise UsageError("%ollie model: give a model name (see %ollie models)")
        backend = self.runtime().core.backend
        backend.set_model(rest)
        return Notice(f"model: {backend.model}")

    def _cmd_agents(self, rest: str) -> Displayable:
        from ollie_nb.core import agent_dirs, list_agents

        core = self.runtime().core
        names = list_agents(core.workdir)
        rows = [(n, "current" if n == core.config.name else "") for n in names]
        dirs = ", ".join(str(d) for d in agent_dirs(core.workdir))
        return Table("agents", ["agent", ""], rows, footer=f"looked in: {dirs}")

    def _cmd_agent(self, rest: str) -> Displayable:
        if not rest:
            return Notice(f"agent: {self.runtime().core.config.name}")
        if self.runtime().busy:
            raise UsageError("%ollie agent: a turn is running; %ollie stop first")
        env = self.core_call(lambda core: core.switch_agent(rest))
        parts: list[Displayable] = [Notice(f"agent: {env.config.name}; {env.plan_backend_reason}")]
        parts.extend(Notice(m, "warning") for m in env.messages)
        return Group(*parts)

    def _cmd_mcp(self, rest: str) -> Displayable:
        info = self.core_call(_list_servers)
        rows = []
        for server in info["servers"]:
            tools = ", ".join(name for name, _ in server["tools"])
            state = server["state"] + (f": {server['detail']}" if server["detail"] else "")
            rows.append((server["name"], server["transport"], state, tools))
        backend = info["plan_backend"] or "none"
        footer = f"plan backend: {backend} ({info['plan_backend_reason']})"
        parts: list[Displayable] = [
            Table(
                "MCP and built-in servers", ["server", "transport", "state", "tools"], rows, footer
            )
        ]
        parts.extend(Notice(m, "warning") for m in info.get("messages", []))
        return Group(*parts)

    def _cmd_fallback(self, rest: str) -> Displayable:
        runtime = self.runtime()
        if not rest:
            current = runtime.core.fallback_plan_backend
            if current is not None:
                label = getattr(current, "label", None) or type(current).__name__
            else:
                label = "the prompt queue" if runtime.core.queue_fallback else "none"
            return Notice(f"fallback: {label}")
        if rest == "off":
            runtime.core.queue_fallback = False
            self.core_call(lambda core: core.set_fallback_plan_backend(None))
            return Notice("fallback: none (plans stay in context unless a task server is wired)")
        if rest == "queue":
            runtime.core.queue_fallback = True
            self.core_call(lambda core: core.set_fallback_plan_backend(None))
            return Notice(self._wiring_note("the prompt queue"))
        target = self._user_value(rest, "fallback")
        from ollie_nb.notebook import notebook_plan_backend

        try:
            backend = notebook_plan_backend(target, runtime)
        except TypeError as exc:
            raise UsageError(f"%ollie fallback: {exc}") from None
        self.core_call(lambda core: core.set_fallback_plan_backend(backend))
        return Notice(self._wiring_note(backend.label))

    def _wiring_note(self, label: str) -> str:
        env = self.runtime().core.env
        if env is not None and env.task_server:
            return (
                f"fallback set to {label}; the task server '{env.task_server}' still takes "
                "priority while it is connected"
            )
        return f"fallback set to {label}: plans go there from the next reasoning_plan"

    def _cmd_plan(self, rest: str) -> Any:
        from ollie_nb.notebook._plans import PlanGraphView

        parser = _Parser(prog="plan", add_help=False)
        parser.add_argument("key", nargs="?")
        parser.add_argument("--watch", type=float, metavar="SECONDS")
        args = parser.parse_args(shlex.split(rest))
        runtime = self.runtime()
        record = runtime.core.find_plan(args.key)
        if record is None:
            what = f"plan {args.key!r}" if args.key else "plan yet"
            raise UsageError(f"%ollie plan: no {what}; ask for something with several steps")
        statuses = self.core_call(lambda core: core.plan_statuses(record))
        view = PlanGraphView(record, statuses, rankdir=self.rankdir)
        if args.watch:
            from ollie_nb.notebook._widgets import watch_plan

            return watch_plan(self, runtime, view, args.watch)
        return view

    def _cmd_plans(self, rest: str) -> Displayable:
        plans = self.runtime().core.plans
        rows = [
            (
                p.number,
                p.goal[:60],
                len(p.steps),
                p.backend or "in context",
                _plan_state(p),
            )
            for p in plans
        ]
        return Table(
            "plans", ["#", "goal", "steps", "backend", "state"], rows, empty="(no plans yet)"
        )

    def _cmd_tasks(self, rest: str) -> Displayable:
        core = self.runtime().core
        server = core.env.task_server if core.env else None
        if not server:
            raise UsageError("%ollie tasks: no task server is wired (see %ollie mcp)")
        status = rest or "all"
        result = self.core_call(
            lambda c: c.env.dispatcher.dispatch(server, "task_list", {"status": status})
        )
        if result.is_error:
            return Notice(result.text, "error")
        return TextBlock(result.text, title=f"tasks on '{server}' ({status})")

    def _cmd_queue(self, rest: str) -> Displayable:
        core = self.runtime().core
        if rest == "clear":
            return Notice(f"cleared {core.clear_queue()} queued prompts")
        if rest:
            raise UsageError("%ollie queue: use '%ollie queue' or '%ollie queue clear'")
        rows = [(i + 1, p.splitlines()[0][:80] if p else "") for i, p in enumerate(core.queued)]
        return Table("queue", ["#", "prompt"], rows, empty="(the queue is empty)")

    def _cmd_run(self, rest: str) -> Any:
        if rest not in ("", "--bg"):
            raise UsageError("%ollie run: use '%ollie run' or '%ollie run --bg'")
        runtime = self.runtime()
        if runtime.busy:
            return Notice("a turn is running; the queue is worked when it ends")
        prompt = runtime.call(_pop_coro(runtime.core))  # after a catch-up poll of the watcher
        if prompt is None:
            return Notice("the queue is empty")
        if rest == "--bg":
            from ollie_nb.notebook._widgets import start_background_turn

            return start_background_turn(self, runtime, prompt)
        return self._foreground(runtime, prompt)

    def _cmd_watch(self, rest: str) -> Displayable:
        parser = _Parser(prog="watch", add_help=False)
        parser.add_argument("action", nargs="?", choices=["on", "off"])
        parser.add_argument("--interval", type=float, default=2.0, metavar="SECONDS")
        args = parser.parse_args(shlex.split(rest))
        core = self.runtime().core
        if args.action == "on":
            watcher = self.core_call(lambda c: c.start_watching(args.interval))
            return Notice(
                f"watching task events on '{watcher.server}' every {watcher.interval:g} s: "
                "each step of your plans that becomes ready is queued (%ollie run works them)"
            )
        if args.action == "off":
            self.core_call(lambda c: c.stop_watching())
            return Notice("stopped watching task events")
        watcher = core.watcher
        if watcher is None:
            return Notice("not watching task events (%ollie watch on)")
        log = "\n".join(watcher.log) or "(nothing yet)"
        return TextBlock(log, title=f"watching '{watcher.server}'; {len(core.queued)} queued")

    def _cmd_stop(self, rest: str) -> Displayable:
        runtime = self.runtime()
        if not runtime.busy:
            return Notice("nothing is running")
        runtime.interrupt()
        return Notice("stopping the running turn")

    def _cmd_compact(self, rest: str) -> Displayable:
        summary = self.core_call(lambda core: core.compact())
        return TextBlock(summary or "(nothing to compact)", title="compacted; summary:")

    def _cmd_context(self, rest: str) -> Displayable:
        core = self.runtime().core
        size = core.context_size()
        limit = self.core_call(lambda c: c.context_length())
        share = f" of {limit} ({100 * size / limit:.0f}%)" if limit else ""
        return Notice(f"context: about {size} tokens{share}; {len(core.history)} messages")

    def _cmd_usage(self, rest: str) -> Displayable:
        return Notice(f"usage: {self.runtime().core.usage}")

    def _cmd_history(self, rest: str) -> Displayable:
        if rest and not rest.isdigit():
            raise UsageError(f"%ollie history: give a number of messages, not {rest!r}")
        core = self.runtime().core
        count = int(rest) if rest else len(core.history)
        lines = []
        for message in core.history[-count:] if count else []:
            body = message.content
            if message.tool_calls:
                body += " " + " ".join(f"[{c.name} {c.arguments[:80]}]" for c in message.tool_calls)
            lines.append(f"{message.role:>9}: {' '.join(body.split())[:200]}")
        return TextBlock(
            "\n".join(lines) or "(empty)", title=f"history ({len(core.history)} messages)"
        )

    def _cmd_clear(self, rest: str) -> Displayable:
        if self.runtime().busy:
            raise UsageError("%ollie clear: a turn is running; %ollie stop first")
        self.runtime().core.clear()
        return Notice("conversation cleared; a new session starts")

    def _cmd_sessions(self, rest: str) -> Displayable:
        from ollie_nb.core import list_sessions

        rows = [
            (
                s.id,
                s.name,
                time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated)),
                s.messages,
                s.first_prompt,
            )
            for s in list_sessions()[:50]
        ]
        return Table("sessions", ["id", "name", "updated", "messages", "first prompt"], rows)

    def _cmd_resume(self, rest: str) -> Displayable:
        from ollie_nb.core import SessionError

        if not rest:
            raise UsageError("%ollie resume: give a session id or name (see %ollie sessions)")
        try:
            self.runtime().core.restore(rest)
        except (SessionError, RuntimeError) as exc:
            raise UsageError(f"%ollie resume: {exc}") from None
        core = self.runtime().core
        return Notice(
            f"resumed {core.session_id}: {len(core.history)} messages, {len(core.plans)} plans"
        )

    def _cmd_rename(self, rest: str) -> Displayable:
        if not rest:
            raise UsageError("%ollie rename: give a name")
        self.runtime().core.rename(rest)
        return Notice(f"session named {rest!r}")

    def _cmd_save(self, rest: str) -> Displayable:
        path = self.runtime().core.save()
        return Notice(f"saved to {path}" if path else "nothing to save yet")

    def _cmd_cwd(self, rest: str) -> Displayable:
        core = self.runtime().core
        if rest:
            try:
                core.set_workdir(os.path.expandvars(rest))
            except OSError as exc:
                raise UsageError(f"%ollie cwd: {exc}") from None
        return Notice(f"work dir: {core.workdir}")

    def _user_value(self, name: str, command: str) -> Any:
        if name not in self.shell.user_ns:
            raise UsageError(f"%ollie {command}: no variable named {name!r} in the notebook")
        return self.shell.user_ns[name]


_ARGUMENT_WORDS = {
    "backend": ["offline", "openai", "openrouter", "anthropic", "ollama"],
    "fallback": ["queue", "off"],
    "queue": ["clear"],
    "run": ["--bg"],
    "watch": ["on", "off", "--interval"],
    "tasks": ["open", "ready", "all", "in_progress", "done", "failed"],
}


def complete(shell: Any, event: Any) -> list[str]:
    """Tab completion after `%ollie`: commands, then each command's likely arguments."""
    words = event.line.split()
    typing_first = len(words) < 2 or (len(words) == 2 and not event.line.endswith(" "))
    if typing_first:
        return COMMANDS
    command = words[1]
    options = list(_ARGUMENT_WORDS.get(command, []))
    if command in ("backend", "fallback"):
        wanted = "create_plan" if command == "fallback" else "chat_stream"
        options += [
            name
            for name, value in shell.user_ns.items()
            if not name.startswith("_")
            and not isinstance(value, type)
            and (hasattr(value, wanted) or (command == "fallback" and inspect.isfunction(value)))
        ]
    elif command == "agent":
        from ollie_nb.core import list_agents

        options += list_agents(os.getcwd())
    elif command == "resume":
        from ollie_nb.core import list_sessions

        options += [s.id for s in list_sessions()[:20]]
    return options


def _plan_state(record: Any) -> str:
    if record.warning:
        return "warning"
    if record.persisted:
        return "queued" if record.ids and record.ids[0] == "q1" else "persisted"
    return "in context"


async def _list_servers(core: Any) -> dict[str, Any]:
    return core.list_servers()


def _pop_coro(core: Any) -> Callable[[], Any]:
    async def pop() -> str | None:
        if core.watcher is not None and core.watcher.running:
            await core.watcher.poll()
        return core.pop_queue()

    return pop


def _queue_coro(core: Any, text: str) -> Callable[[], Any]:
    async def enqueue() -> int:
        return core.queue(text)

    return enqueue


def _show(obj: Any) -> None:
    display(obj)


def _live_display(obj: Any) -> Callable[[Any], None]:
    handle = display(obj, display_id=True)
    return handle.update


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
