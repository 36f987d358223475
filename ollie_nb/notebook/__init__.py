"""The notebook frontend: the IPython extension, the kernel's runtime, the Python handle.

`%load_ext ollie_nb` only registers the magics; the runtime (loop thread,
AgentCore, MCP sessions) starts on first use.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ollie_nb.core import TurnResult
    from ollie_nb.notebook._magics import OllieMagics
    from ollie_nb.notebook._runtime import NotebookRuntime

_lock = threading.Lock()
_active: NotebookRuntime | None = None
_magics: OllieMagics | None = None


def load_ipython_extension(ip: Any) -> None:
    """Register `%ollie` / `%%ollie` (and the OllieMagics config class)."""
    global _magics
    from traitlets import TraitError

    from ollie_nb.notebook._magics import OllieMagics

    try:
        _magics = OllieMagics(shell=ip)  # Magics joins ip.configurables and reads ip.config
    except TraitError as exc:  # a bad %config / ipython_config value must not stop the load
        import sys

        print(f"ollie_nb: ignoring OllieMagics config: {exc}", file=sys.stderr)
        ip.config.pop("OllieMagics", None)
        _magics = OllieMagics(shell=ip)
    ip.register_magics(_magics)
    ip.set_hook("complete_command", _complete, str_key="%ollie")
    from ollie_nb.notebook._magics import help_question_mark

    if help_question_mark not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(help_question_mark)


def unload_ipython_extension(ip: Any) -> None:
    """Close MCP sessions, stop the runtime thread and remove the magics."""
    global _magics
    close_runtime()
    if _magics is not None:
        ip.magics_manager.magics["line"].pop("ollie", None)
        ip.magics_manager.magics["cell"].pop("ollie", None)
        if _magics in ip.configurables:
            ip.configurables.remove(_magics)
        _magics = None
    from ollie_nb.notebook._magics import help_question_mark

    if help_question_mark in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(help_question_mark)
    dispatcher = getattr(ip, "strdispatchers", {}).get("complete_command")
    if dispatcher is not None:
        dispatcher.strs.pop("%ollie", None)


def _complete(shell: Any, event: Any) -> list[str]:
    from ollie_nb.notebook._magics import complete

    return complete(shell, event)


def close_runtime() -> None:
    """Stop the kernel's runtime, if one started."""
    global _active
    with _lock:
        runtime, _active = _active, None
    if runtime is not None:
        runtime.close()


def runtime_for(magics: OllieMagics | None = None) -> NotebookRuntime:
    """The kernel's one runtime, started on first use with the magics' traits."""
    global _active
    with _lock:
        if _active is not None and not _active.closed:
            return _active
        _active = _start_runtime(magics or _magics)
        return _active


def _start_runtime(magics: OllieMagics | None) -> NotebookRuntime:
    from IPython.display import display

    from ollie_nb.core import AgentCore
    from ollie_nb.llm import OfflineBackend, backend_from_env, make_backend
    from ollie_nb.notebook._display import Notice
    from ollie_nb.notebook._runtime import NotebookRuntime

    backend_name = magics.backend if magics else ""
    model = (magics.model if magics else "") or None
    from IPython.core.error import UsageError

    from ollie_nb.llm import LLMError

    level = "info"
    try:
        backend = make_backend(backend_name, model=model) if backend_name else backend_from_env()
    except LLMError as exc:  # keep the notebook usable: `%ollie backend NAME` can fix it
        backend = OfflineBackend()
        backend.notice = f"cannot set up the chat backend ({exc}); using the offline model"
        level = "warning"
    if model and not backend_name:
        backend.set_model(model)
    if isinstance(backend, OfflineBackend) and magics and magics.offline_chunk_delay:
        backend.chunk_delay = magics.offline_chunk_delay
    holder: dict[str, NotebookRuntime] = {}

    approve = _approvals(magics, holder)

    from ollie_nb.notebook._kernel_tools import kernel_servers

    servers = kernel_servers(magics.shell if magics else None, lambda: holder["runtime"])

    def factory() -> AgentCore:
        core = AgentCore(
            backend,
            agent=(magics.agent if magics else "") or None,
            workdir=(magics.workdir if magics else "") or os.getcwd(),
            queue_fallback=bool(magics and magics.fallback == "queue"),
            approve=approve,
            extra_servers=servers,
        )
        core.max_parallel = magics.max_parallel if magics else 0
        return core

    runtime = NotebookRuntime(factory)
    holder["runtime"] = runtime
    notice = getattr(backend, "notice", "")
    try:
        runtime.call(runtime.core.start)
    except (Exception, KeyboardInterrupt) as exc:
        runtime.close()
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        raise UsageError(f"%ollie: the agent could not start: {reason}") from None
    if notice:
        display(Notice(notice, level))
    for message in runtime.core.env.messages if runtime.core.env else []:
        display(Notice(message, "warning"))
    return runtime


def _approvals(magics: OllieMagics | None, holder: dict[str, NotebookRuntime]) -> Any:
    """The approver the core calls for tools outside trustedTools: the notebook widget."""
    from IPython.display import display

    from ollie_nb.core import MaskedArgs
    from ollie_nb.notebook._approval import ApprovalRequest, Approvals

    def describe(name: str, args: dict[str, Any]) -> ApprovalRequest:
        core = holder["runtime"].core
        schema = next((d.input_schema for d in core.tools if d.name == name), None)
        props = schema.get("properties") if isinstance(schema, dict) else None
        known = frozenset(props) if isinstance(props, dict) else None
        scope = (core.session_id, core.config.name, core.config.path)
        paths = args.secret_paths if isinstance(args, MaskedArgs) else ()
        return ApprovalRequest(name, core.router.server_of(name), dict(args), known, scope, paths)

    def show(obj: Any) -> None:
        sink = holder["runtime"].show
        (sink or display)(obj)

    return Approvals(
        mode=lambda: magics.approval if magics else "ask",
        timeout=lambda: magics.approval_timeout if magics else 180.0,
        describe=describe,
        on_main=lambda fn: holder["runtime"].on_main(fn),
        # a foreground turn: no background output to show in, and a cell waiting in the pump
        in_foreground=lambda: holder["runtime"].show is None and holder["runtime"].pumping,
        show=show,
    )


def notebook_plan_backend(target: Any, runtime: NotebookRuntime | None = None) -> Any:
    """Adapt a notebook-defined PlanBackend so its sync code runs on the kernel thread."""
    from ollie_nb.planning import AdaptedPlanBackend

    runtime = runtime or runtime_for()

    async def run_sync(fn: Any) -> Any:
        return await runtime.run_on_main(fn)

    return AdaptedPlanBackend(target, run_sync=run_sync)


class AgentHandle:
    """The kernel's agent for people who prefer code to magics."""

    def __init__(self, runtime: NotebookRuntime) -> None:
        self._runtime = runtime

    def __repr__(self) -> str:
        core = self._runtime.core
        return f"<ollie agent {core.config.name!r}: {core.backend.name}/{core.backend.model}, {len(core.history)} messages>"

    @property
    def core(self) -> Any:
        """The AgentCore (its coroutines must run on the runtime loop: use `call`)."""
        return self._runtime.core

    def ask(self, prompt: str, *, show: bool = True) -> str:
        """Run a prompt as a turn (streamed into the cell when `show`); returns the reply."""
        from ollie_nb.notebook._magics import _live_display, _show
        from ollie_nb.notebook._render import Settings, TurnView

        view = TurnView(Settings(), _show, _live_display) if show else (lambda event: None)
        result = self._runtime.run_turn(prompt, view)
        if show:
            view.finish()
        return result.reply

    async def aask(self, prompt: str) -> str:
        """`await agent.aask(prompt)`: run a turn without blocking the kernel's event loop."""
        import asyncio

        future = self._runtime.start_turn(prompt, None)
        result: TurnResult = await asyncio.wrap_future(future)
        return result.reply

    def call(self, fn: Any) -> Any:
        """Run `await fn(core)` on the runtime loop and return the result."""
        return self._runtime.call(lambda: fn(self._runtime.core))

    def stop(self) -> None:
        """Interrupt the running turn."""
        self._runtime.interrupt()

    @property
    def history(self) -> list[Any]:
        return list(self._runtime.core.history)

    @property
    def plans(self) -> list[Any]:
        return self._runtime.core.plans


def agent() -> AgentHandle:
    """The kernel's agent handle (the runtime starts if needed)."""
    return AgentHandle(runtime_for())


def set_fallback(obj: Any) -> None:
    """Plug a notebook-defined PlanBackend as the fallback (None to remove it)."""
    runtime = runtime_for()
    backend = None if obj is None else notebook_plan_backend(obj, runtime)
    runtime.call(lambda: runtime.core.set_fallback_plan_backend(backend))


def use_backend(name_or_backend: Any, model: str | None = None) -> Any:
    """Switch the chat backend: a name (offline, openai, ...) or a Backend object."""
    from ollie_nb.llm import make_backend

    backend = (
        make_backend(name_or_backend, model=model)
        if isinstance(name_or_backend, str)
        else name_or_backend
    )
    runtime_for().core.set_backend(backend)
    return backend
