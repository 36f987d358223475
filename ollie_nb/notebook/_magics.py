"""`%ollie` / `%%ollie`: parse, call the runtime, return a displayable. Logic lives in the core.

The commands are registered in one registry (`_registry.COMMANDS`, filled by the
`_commands*` modules); help, completion and "did you mean" come from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.display import display
from traitlets import Bool, Enum, Float, Int, Unicode, observe

from ollie_nb.notebook import (  # noqa: F401  (they register their commands)
    _commands,
    _commands_inspect,
    _commands_plans,
    _commands_python,
    _commands_session,
)
from ollie_nb.notebook._commands_inspect import record_error
from ollie_nb.notebook._display import Live, Notice, TextBlock
from ollie_nb.notebook._prompt_line import OPTIONS_HELP, parse_prompt_line
from ollie_nb.notebook._registry import COMMANDS

USAGE_ERRORS = (ValueError, RuntimeError, OSError, LookupError, TimeoutError)
"""What the core raises for a request that cannot be met (bad names, files, state); and
LLMError (chat backends), matched by `_usage_error` without importing the llm layer at
`%load_ext` time."""

HELP_HEAD = f"""\
%%ollie {OPTIONS_HELP}   run the cell as a prompt
%ollie ask [options] TEXT      run one line as a prompt (text ending in '?': use %%ollie)

Commands (%ollie COMMAND):"""
HELP_TAIL = "Options are also settable with %config OllieMagics.<name> (see %config OllieMagics)."


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
        help="Tools outside trustedTools: ask (a widget in the notebook), allow, or deny.",
    ).tag(config=True)
    approval_timeout = Float(
        180.0, help="Seconds an approval waits for an answer before the call is denied."
    ).tag(config=True)
    watch_interval = Float(
        2.0,
        help="Seconds between reads of task events when the task server offers no change signal.",
    ).tag(config=True)
    max_parallel = Int(
        0, help="Sub-agents running at once (set before the agent starts); 0 = maxParallel."
    ).tag(config=True)
    remote_images = Bool(
        False,
        help="Load the images a reply shows (each one a fetch from its host, whenever the "
        "notebook is opened); off: a link naming the host.",
    ).tag(config=True)
    offline_chunk_delay = Float(
        0.0, help="Seconds between words of the offline model's replies."
    ).tag(config=True)

    @observe("remote_images")
    def _remote_images_changed(self, change: Any) -> None:
        from ollie_nb.notebook._display import Images

        Images.remote = bool(change["new"])

    # -- entry point ---------------------------------------------------------

    @no_var_expand  # a prompt's $x and {x} are the user's text (-i formats {x} on purpose)
    @line_cell_magic
    def ollie(self, line: str = "", cell: str | None = None) -> Any:
        """Run the agent: `%%ollie` for a cell prompt, `%ollie COMMAND` for everything else."""
        if cell is not None:
            return self.prompt("%%ollie", line, cell)
        line = line.strip()
        quiet = line.endswith(";")  # IPython's displayhook cannot see a ; inside a magic line
        line = line.removesuffix(";").rstrip()
        if not line:
            return TextBlock(self.help_text())
        name, _, rest = line.partition(" ")
        result = COMMANDS.get(name).handler(self, rest.strip())
        return None if quiet else result

    def help_text(self) -> str:
        return "\n".join([HELP_HEAD, *COMMANDS.help_lines(), "", HELP_TAIL])

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
            if _usage_error(exc):
                raise UsageError(f"%ollie: {_one_line(exc)}") from None
            display(record_error(exc, runtime.core.redact))  # a bug: %ollie debug has the traceback
            return None

    def on_loop(self, fn: Callable[[Any], Any]) -> Any:
        """Run the plain `fn(core)` on the runtime loop, where the core lives, and return its result."""

        async def run(core: Any) -> Any:
            return fn(core)

        return self.core_call(run)

    def user_value(self, name: str, command: str) -> Any:
        if name not in self.shell.user_ns:
            raise UsageError(f"%ollie {command}: no variable named {name!r} in the notebook")
        return self.shell.user_ns[name]

    # -- prompts -------------------------------------------------------------

    def prompt(self, prog: str, line: str, cell: str | None = None) -> Any:
        """Run a prompt (a cell, or the text after `%ollie ask`'s options)."""
        options, text = parse_prompt_line(line, prog)
        if cell is not None:
            if text:
                raise UsageError(f"{prog}: unexpected words on the magic line: {text}")
            text = cell
        if not text.strip():
            raise UsageError(f"{prog}: the prompt is empty")
        if options.interpolate or self.interpolate:
            try:
                text = text.format(**self.shell.user_ns)
            except (KeyError, IndexError, ValueError, AttributeError) as exc:
                raise UsageError(f"{prog} -i: cannot format the prompt: {_one_line(exc)}") from None
        runtime = self.runtime()
        if options.agent:
            COMMANDS.get("agent").handler(self, options.agent)
        if options.model:
            COMMANDS.get("model").handler(self, options.model)
        if runtime.busy:
            if options.inject:
                runtime.call_soon(lambda: runtime.core.inject(text))
                return Notice("injected into the running turn")
            position = self.on_loop(lambda core: core.queue(text))
            return Notice(f"a turn is running; queued as #{position}")
        if options.bg:
            from ollie_nb.notebook._widgets import start_background_turn

            return start_background_turn(self, runtime, text)
        return self.foreground(runtime, text)

    def foreground(self, runtime: Any, text: str) -> None:
        from ollie_nb.notebook._render import TurnView

        view = TurnView(self.settings(), _show, _live_display, self._statuses_on_main(runtime))
        try:
            runtime.run_turn(text, view, tick=view.tick)
        except KeyboardInterrupt:
            view.finish()
            display(Notice("interrupted; the turn did not wind down in time", "warning"))
            return None
        except Exception as exc:  # the turn loop answers every usage problem itself: a bug
            view.finish()
            display(record_error(exc, runtime.core.redact))
            return None
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


def complete(shell: Any, event: Any) -> list[str]:
    """Tab completion after `%ollie`: commands, then each command's likely arguments."""
    return COMMANDS.completions(shell, event.line)


def help_question_mark(lines: list[str]) -> list[str]:
    """An input transformer: `%ollie ask What is a plan?` is a prompt, not a request for help.

    IPython reads a line ending in `?` as `pinfo` of its last word; this rewrites
    such `%ollie` lines into the magic call before that happens.
    """
    out = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("%ollie ") and stripped.endswith("?") and len(lines) == 1:
            rest = stripped[len("%ollie ") :]
            line = f"get_ipython().run_line_magic('ollie', {rest!r})\n"
        out.append(line)
    return out


def _show(obj: Any) -> None:
    display(obj)


def _live_display(obj: Any) -> Callable[[Any], None]:
    """Show `obj` and return a function that replaces it in place.

    A terminal (IPython's own, not a kernel) cannot replace an output: every update would
    print again, and a half-streamed line would stay. There the streaming area is not
    shown at all (the finished reply is, as its own output) and other objects once.
    """
    if _text_only():
        if not isinstance(obj, Live):
            display(obj)
        return _ignore
    handle = display(obj, display_id=True)
    return handle.update


def _text_only() -> bool:
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "TerminalInteractiveShell"


def _ignore(obj: Any) -> None:
    return None


def _usage_error(exc: Exception) -> bool:
    from ollie_nb.llm import LLMError

    return isinstance(exc, (*USAGE_ERRORS, LLMError))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
