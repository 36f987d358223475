"""The kernel's state: its one NotebookRuntime (started on first use) and the traits it starts with.

Everything of the notebook that needs the runtime asks here; the runtime itself
(loop thread, AgentCore, MCP sessions) starts on the first command that needs it,
never at `%load_ext` (the core, llm and MCP modules load then, inside functions).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from IPython.core.error import UsageError
from IPython.display import display

from ollie_nb.errors import ConfigError
from ollie_nb.notebook._display import NoticeView

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore, Budgets
    from ollie_nb.notebook._approval import Approvals
    from ollie_nb.notebook._runtime import NotebookRuntime


class StartTraits(Protocol):
    """The magics' traits the runtime starts with (OllieMagics has them all)."""

    shell: Any
    backend: str
    model: str
    agent: str
    workdir: str
    fallback: str
    approval: str
    approval_timeout: float
    max_parallel: int
    offline_chunk_delay: float
    review_plans: bool | None
    max_session_cost: float
    max_session_tokens: int
    max_plan_cost: float
    max_plan_tokens: int
    max_subagent_cost: float
    max_subagent_tokens: int
    ask_at_caps: bool


def budgets_of(traits: StartTraits | None) -> Budgets:
    """The spend caps the traits set (0 is no cap)."""
    from ollie_nb.core import Budgets, Caps  # the core loads on first use, not at %load_ext

    if traits is None:
        return Budgets()

    def caps(cost: float, tokens: int) -> Caps:
        return Caps(cost or None, tokens or None)

    return Budgets(
        caps(traits.max_session_cost, traits.max_session_tokens),
        caps(traits.max_plan_cost, traits.max_plan_tokens),
        caps(traits.max_subagent_cost, traits.max_subagent_tokens),
    )


_lock = threading.Lock()
_active: NotebookRuntime | None = None
_traits: StartTraits | None = None


def set_traits(traits: StartTraits | None) -> None:
    """The traits of the registered magics (None when the extension is unloaded)."""
    global _traits
    _traits = traits


def traits() -> StartTraits | None:
    """The traits of the registered magics, if the extension is loaded."""
    return _traits


def active() -> NotebookRuntime | None:
    """The running runtime, if one started and is not closed."""
    runtime = _active
    return runtime if runtime is not None and not runtime.closed else None


def runtime_for(traits: StartTraits | None = None) -> NotebookRuntime:
    """The kernel's one runtime, started on first use with the magics' traits."""
    global _active
    with _lock:
        if _active is not None and not _active.closed:
            return _active
        _active = _start_runtime(traits or _traits)
        return _active


def close_runtime() -> None:
    """Stop the kernel's runtime, if one started."""
    global _active
    with _lock:
        runtime, _active = _active, None
    if runtime is not None:
        runtime.close()


def _start_runtime(traits: StartTraits | None) -> NotebookRuntime:
    # The core, the llm layer, the MCP SDK and asyncio load here, on first use: `%load_ext`
    # stays fast.
    from ollie_nb.core import AgentCore
    from ollie_nb.llm import LLMError, OfflineBackend, backend_from_env, make_backend
    from ollie_nb.notebook._kernel_tools import kernel_servers

    backend_name = traits.backend if traits else ""
    model = (traits.model if traits else "") or None
    level = "info"
    try:
        backend = make_backend(backend_name, model=model) if backend_name else backend_from_env()
    except LLMError as exc:  # keep the notebook usable: `%ollie backend NAME` can fix it
        backend = OfflineBackend()
        backend.notice = f"cannot set up the chat backend ({exc}); using the offline model"
        level = "warning"
    if model and not backend_name:
        backend.set_model(model)
    if isinstance(backend, OfflineBackend) and traits and traits.offline_chunk_delay:
        backend.chunk_delay = traits.offline_chunk_delay
    holder: dict[str, NotebookRuntime] = {}
    approve = _approvals(traits, holder)
    servers = kernel_servers(traits.shell if traits else None, lambda: holder["runtime"])

    def factory(agent: str | None) -> Callable[[], AgentCore]:
        def make() -> AgentCore:
            core = AgentCore(
                backend,
                agent=agent,
                workdir=(traits.workdir if traits else "") or os.getcwd(),
                queue_fallback=bool(traits and traits.fallback == "queue"),
                approve=approve,
                extra_servers=servers,
            )
            core.max_parallel = traits.max_parallel if traits else 0
            core.plans.review = traits.review_plans if traits else None
            core.user_budgets = budgets_of(traits)
            core.cap_ask.on = bool(traits and traits.ask_at_caps)
            if traits:  # a cap waits on the inbox as long as an approval on its widget
                core.cap_ask.timeout = traits.approval_timeout
            return core

        return make

    agent = (traits.agent if traits else "") or None
    try:
        runtime = _started(factory(agent), holder)
    except ConfigError as exc:  # OllieMagics.agent names no usable agent: start the default one
        if agent is None:
            raise UsageError(f"%ollie: the agent could not start: {exc}") from None
        runtime = _started(factory(None), holder)
        runtime.agent_problem = f"OllieMagics.agent {agent!r} did not load ({exc})"
        display(NoticeView(f"{runtime.agent_problem}; using the default agent", "warning"))
    notice = getattr(backend, "notice", "")
    if notice:
        display(NoticeView(notice, level))
    for message in runtime.core.servers.messages if runtime.core.servers else []:
        display(NoticeView(message, "warning"))
    return runtime


def _started(
    factory: Callable[[], AgentCore], holder: dict[str, NotebookRuntime]
) -> NotebookRuntime:
    """A runtime whose core has started; a ConfigError (the agent file) is raised as it is."""
    from ollie_nb.notebook._runtime import NotebookRuntime

    runtime = NotebookRuntime(factory)
    holder["runtime"] = runtime
    try:
        runtime.call(runtime.core.start)
    except (Exception, KeyboardInterrupt) as exc:
        runtime.close()
        if isinstance(exc, ConfigError):
            raise
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        raise UsageError(f"%ollie: the agent could not start: {reason}") from None
    return runtime


def _approvals(traits: StartTraits | None, holder: dict[str, NotebookRuntime]) -> Approvals:
    """The approver the core calls for tools outside trustedTools: the notebook widget."""
    from ollie_nb.core import MaskedArgs  # with the core, on first use
    from ollie_nb.notebook._approval import ApprovalRequest, Approvals  # asyncio: on first use

    def describe(name: str, args: dict[str, Any]) -> ApprovalRequest:
        core = holder["runtime"].core  # called on the runtime loop, where the core lives
        schema = next((d.input_schema for d in core.tools if d.name == name), None)
        props = schema.get("properties") if isinstance(schema, dict) else None
        known = frozenset(props) if isinstance(props, dict) else None
        scope = (core.session.session_id, core.config.name, core.config.path)
        paths = args.secret_paths if isinstance(args, MaskedArgs) else ()
        return ApprovalRequest(name, core.router.server_of(name), dict(args), known, scope, paths)

    def show(obj: Any) -> None:
        sink = holder["runtime"].show
        (sink or display)(obj)

    return Approvals(
        mode=lambda: traits.approval if traits else "ask",
        timeout=lambda: traits.approval_timeout if traits else 180.0,
        describe=describe,
        on_main=lambda fn: holder["runtime"].on_main(fn),
        # a foreground turn: no background output to show in, and a cell waiting in the pump
        in_foreground=lambda: holder["runtime"].show is None and holder["runtime"].pumping,
        show=show,
    )


def notebook_plan_backend(target: Any, runtime: NotebookRuntime | None = None) -> Any:
    """Adapt a notebook-defined PlanBackend so its sync code runs on the kernel thread."""
    from ollie_nb.planning import AdaptedPlanBackend  # the planning layer: on first use

    runtime = runtime or runtime_for()

    async def run_sync(fn: Any) -> Any:
        return await runtime.run_on_main(fn, users=True)

    return AdaptedPlanBackend(target, run_sync=run_sync)
