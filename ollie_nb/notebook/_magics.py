"""`%ollie` / `%%ollie`: parse, call the runtime, return a displayable. Logic lives in the core.

The commands are registered in one registry (`commands.COMMANDS`, filled by the
topic modules of `commands`); help, completion and "did you mean" come from it. An
exception that reaches a magic is shown by whose it is (`_failures`): a usage-like
kind as one UsageError line, the user's own code as theirs, anything else as a bug.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.display import display
from traitlets import Bool, Enum, Float, Int, TraitError, Unicode, observe, validate

from ollie_nb import redaction
from ollie_nb.notebook import _state
from ollie_nb.notebook._display import NoticeView, TextBlock
from ollie_nb.notebook._failures import failure_notice, one_line, usage_error
from ollie_nb.notebook._output import live_display, show
from ollie_nb.notebook._prompt_line import OPTIONS_HELP, parse_prompt_line
from ollie_nb.notebook.commands import COMMANDS

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore
    from ollie_nb.notebook._render import Settings
    from ollie_nb.notebook._runtime import NotebookRuntime
    from ollie_nb.planning import QueuedPrompt, StepState

T = TypeVar("T")
BUDGET_TRAITS = (
    "max_session_cost",
    "max_session_tokens",
    "max_plan_cost",
    "max_plan_tokens",
    "max_subagent_cost",
    "max_subagent_tokens",
)

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
    tracing = Bool(
        False,
        help="Export OpenTelemetry traces of turns, model requests, tool calls and plan steps "
        "(OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT; needs ollie-nb[otel]).",
    ).tag(config=True)
    offline_chunk_delay = Float(
        0.0, help="Seconds between words of the offline model's replies."
    ).tag(config=True)
    review_plans = Bool(
        None,
        allow_none=True,
        help="Hold each plan for your review before it is saved (%ollie plan approve N): "
        "True or False wins over the agent's reviewPlans; None uses it.",
    ).tag(config=True)

    @observe("review_plans")
    def _review_plans_changed(self, change: Any) -> None:
        runtime = _state.active()
        if runtime is not None:  # read by the agent at its next plan
            runtime.core.plans.review = change["new"]

    max_session_cost = Float(0.0, help="Dollars the session may spend; 0 = no cap.").tag(
        config=True
    )
    max_session_tokens = Int(0, help="Tokens the session may use; 0 = no cap.").tag(config=True)
    max_plan_cost = Float(0.0, help="Dollars one plan run may spend; 0 = no cap.").tag(config=True)
    max_plan_tokens = Int(0, help="Tokens one plan run may use; 0 = no cap.").tag(config=True)
    max_subagent_cost = Float(0.0, help="Dollars one sub-agent may spend; 0 = no cap.").tag(
        config=True
    )
    max_subagent_tokens = Int(0, help="Tokens one sub-agent may use; 0 = no cap.").tag(config=True)
    ask_at_caps = Bool(
        False,
        help="At a reached spend cap, pause and ask the task store's inbox (raise or stop) "
        "instead of stopping; a store without an inbox stops as before.",
    ).tag(config=True)

    @observe("ask_at_caps")
    def _ask_at_caps_changed(self, change: Any) -> None:
        runtime = _state.active()
        if runtime is not None:  # from the next request that meets a cap
            on = bool(change["new"])
            runtime.call_soon(lambda: setattr(runtime.core.cap_ask, "on", on))

    # -- checks: a bad value is one line (TraitError), the old value stays ----

    @validate("tracing")
    def _switch_tracing(self, proposal: Any) -> bool:
        from ollie_nb.core import TracingUnavailableError, disable_tracing, enable_tracing, tracing

        on = bool(proposal["value"])
        if on and not tracing().enabled:
            try:
                enable_tracing()
            except TracingUnavailableError as exc:  # the extra is missing: one line
                raise TraitError(f"OllieMagics.tracing: {exc}") from None
        elif not on:
            disable_tracing()
        return on

    @validate("workdir")
    def _check_workdir(self, proposal: Any) -> str:
        value = str(proposal["value"])
        if value and not os.path.isdir(os.path.expanduser(os.path.expandvars(value))):
            raise TraitError(f"OllieMagics.workdir: {value} is not a directory")
        return value

    @validate("fallback")
    def _check_fallback(self, proposal: Any) -> str:
        if proposal["value"] not in ("", "queue"):
            raise TraitError(
                f"OllieMagics.fallback: {proposal['value']!r} is not '' (none) or 'queue'; "
                "a PlanBackend object is plugged with %ollie fallback VAR"
            )
        return str(proposal["value"])

    @validate("approval_timeout", "watch_interval", "stream_interval")
    def _check_seconds(self, proposal: Any) -> float:
        value = proposal["value"]
        if not value > 0:
            raise TraitError(f"OllieMagics.{proposal['trait'].name}: {value} s must be more than 0")
        return float(value)

    @observe(*BUDGET_TRAITS)
    def _budgets_changed(self, change: Any) -> None:
        """A cap set while the agent runs applies from its next model request."""
        runtime = _state.active()
        if runtime is not None:
            budgets = _state.budgets_of(self)
            runtime.call_soon(lambda: setattr(runtime.core, "user_budgets", budgets))

    @validate("result_chars", "max_parallel", "offline_chunk_delay", *BUDGET_TRAITS)
    def _check_not_negative(self, proposal: Any) -> Any:
        value = proposal["value"]
        if value < 0:
            raise TraitError(f"OllieMagics.{proposal['trait'].name}: {value} must be 0 or more")
        return value

    # -- entry point ---------------------------------------------------------

    @no_var_expand  # a prompt's $x and {x} are the user's text (-i formats {x} on purpose)
    @line_cell_magic
    def ollie(self, line: str = "", cell: str | None = None) -> Any:
        """Run the agent: `%%ollie` for a cell prompt, `%ollie COMMAND` for everything else."""
        try:
            if cell is not None:
                return self.prompt("%%ollie", line, cell)
            return self._command(line.strip())
        except Exception as exc:
            usage = usage_error(exc)
            if usage is not None:
                raise usage from None
            display(
                failure_notice(exc, _redact)
            )  # theirs, or a bug: %ollie debug has the traceback
            return None

    def _command(self, line: str) -> Any:
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

    def runtime(self) -> NotebookRuntime:
        return _state.runtime_for(self)

    def core_call(self, fn: Callable[[AgentCore], Awaitable[T]]) -> T:
        """Run `await fn(core)` on the runtime and return its result (Ctrl-C cancels).

        What it raises reaches `ollie`, which shows it by whose it is.
        """
        runtime = self.runtime()
        try:
            return runtime.call(lambda: fn(runtime.core))
        except KeyboardInterrupt:
            raise UsageError("%ollie: interrupted") from None

    def on_loop(self, fn: Callable[[AgentCore], T]) -> T:
        """Run the plain `fn(core)` on the runtime loop, where the core lives, and return its result."""

        async def run(core: AgentCore) -> T:
            return fn(core)

        return self.core_call(run)

    def user_value(self, name: str, command: str) -> Any:
        assert self.shell is not None  # IPython loads the magics into a shell
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
            assert self.shell is not None  # IPython loads the magics into a shell
            try:
                text = text.format(**self.shell.user_ns)
            except (KeyError, IndexError, ValueError, AttributeError) as exc:
                raise UsageError(f"{prog} -i: cannot format the prompt: {one_line(exc)}") from None
        runtime = self.runtime()
        if options.agent:
            COMMANDS.get("agent").handler(self, options.agent)
        if options.model:
            COMMANDS.get("model").handler(self, options.model)
        if runtime.busy:
            if options.inject:
                runtime.call_soon(lambda: runtime.core.turns.inject(text))
                return NoticeView("injected into the running turn")
            position = self.on_loop(lambda core: core.prompts.put(text))
            return NoticeView(f"a turn is running; queued as #{position}")
        if options.bg:
            from ollie_nb.notebook._widgets import BackgroundTurn  # ipywidgets: on first use

            return BackgroundTurn(self.settings(), runtime, text)
        return self.foreground(runtime, text)

    def foreground(self, runtime: NotebookRuntime, text: str | QueuedPrompt) -> None:
        from ollie_nb.notebook._render import TurnView  # the planning layer: on first use
        from ollie_nb.notebook._widgets import held_plan_review  # ipywidgets: when a plan is held

        settings = self.settings()
        statuses = self._statuses_on_main(runtime)
        review = held_plan_review(runtime, settings)
        view = TurnView(settings, show, live_display, statuses, review)
        try:
            runtime.run_turn(text, view, tick=view.tick)
        except KeyboardInterrupt:
            view.finish()
            display(NoticeView("interrupted; the turn did not wind down in time", "warning"))
            return None
        except Exception:  # the turn loop answers usage problems itself: theirs, or a bug
            view.finish()
            raise
        view.finish()
        return None

    def _statuses_on_main(self, runtime: NotebookRuntime) -> Callable[[Any], dict[str, StepState]]:
        def statuses(record: Any) -> dict[str, StepState]:
            # Wait without pumping: this runs inside the pump, which must not re-enter the view.
            future = runtime.submit(lambda: runtime.core.plans.statuses(record))
            try:
                return future.result(timeout=10)
            except Exception:
                future.cancel()
                return {}

        return statuses

    def settings(self) -> Settings:
        from ollie_nb.notebook._render import Settings  # the planning layer: on first use

        return Settings(
            show_tools=self.show_tools,
            result_chars=self.result_chars,
            stream_interval=self.stream_interval,
            rankdir=self.rankdir,
            usage_footer=self.usage_footer,
            remote_images=self.remote_images,
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


def load(ip: Any) -> None:
    """Register `%ollie` / `%%ollie` (and the OllieMagics config class)."""
    try:
        magics = OllieMagics(shell=ip)  # Magics joins ip.configurables and reads ip.config
    except TraitError as exc:  # a bad %config / ipython_config value must not stop the load
        print(f"ollie_nb: ignoring OllieMagics config: {exc}", file=sys.stderr)
        ip.config.pop("OllieMagics", None)
        magics = OllieMagics(shell=ip)
    _state.set_traits(magics)
    ip.register_magics(magics)
    ip.set_hook("complete_command", complete, str_key="%ollie")
    if help_question_mark not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(help_question_mark)


def unload(ip: Any) -> None:
    """Close MCP sessions, stop the runtime thread and remove the magics."""
    _state.close_runtime()
    magics = _state.traits()
    if magics is not None:
        ip.magics_manager.magics["line"].pop("ollie", None)
        ip.magics_manager.magics["cell"].pop("ollie", None)
        if magics in ip.configurables:
            ip.configurables.remove(magics)
        _state.set_traits(None)
    if help_question_mark in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(help_question_mark)
    dispatcher = getattr(ip, "strdispatchers", {}).get("complete_command")
    if dispatcher is not None:
        dispatcher.strs.pop("%ollie", None)


def _redact(text: str) -> str:
    """A failure's text without secrets: the running core's known ones, and key formats."""
    runtime = _state.active()
    if runtime is not None and not runtime.closed:
        return runtime.core.redact(text)
    return redaction.redact(text)
