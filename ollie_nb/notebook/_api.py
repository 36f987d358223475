"""The kernel's agent for people who prefer code to magics: `ollie_nb.agent()`, tools, backends.

Whatever touches the core runs on the runtime loop (`NotebookRuntime.call`), as the
magics' commands do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ollie_nb.notebook import _state
from ollie_nb.notebook._kernel_tools import notebook_tools
from ollie_nb.notebook._output import live_display
from ollie_nb.notebook._output import show as show_output
from ollie_nb.notebook._render import Settings, TurnView

if TYPE_CHECKING:
    from ollie_nb.core import TurnResult
    from ollie_nb.notebook._runtime import NotebookRuntime
    from ollie_nb.planning import PlanDraft, PlanRecord

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
_pending: set[asyncio.Future[None]] = set()  # refreshes started on the loop itself


class AgentHandle:
    """The kernel's agent for people who prefer code to magics."""

    def __init__(self, runtime: NotebookRuntime) -> None:
        self._runtime = runtime

    def __repr__(self) -> str:
        core = self._runtime.core  # plain reads, safe from any thread (also the loop's own)
        return f"<ollie agent {core.config.name!r}: {core.backend.name}/{core.backend.model}, {len(core.session.history)} messages>"

    @property
    def core(self) -> Any:
        """The AgentCore (its coroutines must run on the runtime loop: use `call`)."""
        return self._runtime.core

    def ask(self, prompt: str, *, show: bool = True) -> str:
        """Run a prompt as a turn (streamed into the cell when `show`); returns the reply."""
        if not show:
            return self._runtime.run_turn(prompt, lambda event: None).reply
        view = self._turn_view()
        result = self._runtime.run_turn(prompt, view)
        view.finish()
        return result.reply

    def _turn_view(self) -> TurnView:
        """A turn streamed into the cell; a plan held for review shows its editor there."""
        from ollie_nb.notebook._widgets import held_plan_review  # ipywidgets: on first use

        settings = Settings()
        review = held_plan_review(self._runtime, settings)
        return TurnView(settings, show_output, live_display, review=review)

    async def aask(self, prompt: str) -> str:
        """`await agent.aask(prompt)`: run a turn without blocking the kernel's event loop."""
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
        return list(self._runtime.core.session.history)

    @property
    def plans(self) -> PlanList:
        """Every plan of the session; `.held()` those waiting for your review."""
        return PlanList(list(self._runtime.core.plans))

    # -- plan review (see docs/PLANS.md, "Reviewing a plan") -------------------------------

    def held_plans(self) -> list[Any]:
        """The plans waiting for your review, oldest first."""
        return self._on_loop(lambda core: core.plans.held())

    def plan_draft(self, number: int) -> PlanDraft:
        """A draft of plan `number` to edit (held: as you left it; saved: its steps and ids)."""
        return self._on_loop(lambda core: core.plans.draft(number))

    def keep_draft(self, number: int, draft: PlanDraft) -> None:
        """Keep `draft` as held plan `number`'s: `%ollie plan approve N` and the session use it."""
        self._on_loop(lambda core: core.plans.keep_draft(number, draft))

    def approve_plan(
        self, number: int, draft: PlanDraft | None = None, *, run: bool = False
    ) -> PlanRecord:
        """Save held plan `number` (as `draft` edits it) and queue the model's approval; with
        `run`, work it now as a turn streamed into the cell."""
        record = self.call(lambda core: core.plans.approve(number, draft))
        if run:
            self._run_review(number)
        return record

    def reject_plan(
        self, number: int, reason: str, draft: PlanDraft | None = None, *, run: bool = False
    ) -> PlanRecord:
        """Send held plan `number` back with `reason` (queued); with `run`, let the model revise
        it now (the revision is held again)."""
        record = self._on_loop(lambda core: core.plans.reject(number, reason, draft))
        if run:
            self._run_review(number)
        return record

    def discard_plan(self, number: int) -> PlanRecord:
        """Drop held plan `number`: nothing is saved; the agent is told at its next turn."""
        return self._on_loop(lambda core: core.plans.discard(number))

    def edit_saved_plan(self, number: int, draft: PlanDraft) -> list[str]:
        """Apply `draft` to saved plan `number` on its task server; the changes made."""
        return self.call(lambda core: core.plans.edit_saved(number, draft))

    def _run_review(self, number: int) -> None:
        if self._runtime.busy:  # it stays queued: worked after the running turn
            return
        item = self._on_loop(lambda core: core.plans.take_prompt(number))
        if item is not None:
            view = self._turn_view()
            self._runtime.run_turn(item, view)
            view.finish()

    def _on_loop(self, fn: Callable[[Any], T]) -> T:
        """Run the plain `fn(core)` on the runtime loop and return its result."""

        async def run(core: Any) -> T:
            return fn(core)

        return self.call(run)


class PlanList(list[Any]):
    """The session's plans (a list), with the ones held for review a call away."""

    def held(self) -> list[Any]:
        """The plans waiting for your review, oldest first."""
        return [p for p in self if getattr(p, "held", False)]


def agent() -> AgentHandle:
    """The kernel's agent handle (the runtime starts if needed)."""
    return AgentHandle(_state.runtime_for())


def set_fallback(obj: Any) -> None:
    """Plug a notebook-defined PlanBackend as the fallback (None to remove it)."""
    runtime = _state.runtime_for()
    backend = None if obj is None else _state.notebook_plan_backend(obj, runtime)
    runtime.call(lambda: runtime.core.plans.set_fallback(backend))


def use_backend(name_or_backend: Any, model: str | None = None) -> Any:
    """Switch the chat backend: a name (offline, openai, ...) or a Backend object."""
    from ollie_nb.llm import make_backend  # the llm layer: on first use

    backend = (
        make_backend(name_or_backend, model=model)
        if isinstance(name_or_backend, str)
        else name_or_backend
    )
    runtime = _state.runtime_for()
    if _on_loop_of(runtime):  # an async tool switching: it runs on the loop already
        runtime.core.set_backend(backend)
        return backend

    async def switch() -> None:
        runtime.core.set_backend(backend)

    runtime.call(switch)
    return backend


def add_tool(
    fn: Callable[..., Any],
    name: str | None = None,
    trusted: bool = True,
    sequential: bool = False,
) -> str:
    """Register `fn` as a tool of the kernel's agent (replacing one of the same name);
    `sequential` makes its calls run alone, never beside other calls of one response."""
    tool_name = notebook_tools().add(fn, name, trusted, sequential)
    _refresh()
    return tool_name


def remove_tool(name: str) -> bool:
    """Unregister a notebook tool; False when none had that name."""
    removed = notebook_tools().remove(name)
    _refresh()
    return removed


def tool(
    fn: F | None = None,
    *,
    name: str | None = None,
    trusted: bool = True,
    sequential: bool = False,
) -> F | Callable[[F], F]:
    """`@ollie_nb.tool` / `@ollie_nb.tool(name=..., trusted=False, sequential=True)`: the
    function stays as it is."""

    def register(target: F) -> F:
        add_tool(target, name, trusted, sequential)
        return target

    return register(fn) if fn is not None else register


def _refresh() -> None:
    """Let a running agent see the change (the tool list is read again on its loop)."""
    runtime = _state.active()
    if runtime is None:
        return
    if _on_loop_of(runtime):  # an async tool registering another: do not wait for ourselves
        _pending.add(task := asyncio.ensure_future(runtime.core.refresh_tools()))
        task.add_done_callback(_pending.discard)
        return
    runtime.submit(runtime.core.refresh_tools).result(timeout=10)


def _on_loop_of(runtime: NotebookRuntime) -> bool:
    """True when called on the runtime's own loop (waiting for it there would never end)."""
    try:
        return asyncio.get_running_loop() is runtime.loop
    except RuntimeError:
        return False
