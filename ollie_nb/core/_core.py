"""AgentCore: the facade over the turn loop, the prompt queue, tools, plans and sessions.

Frontend-agnostic and async: a plain script drives it with asyncio.run, the
notebook runtime drives it from its own loop thread. Every tool call goes
through the env's Dispatcher; every event goes to the `on_event` sink. The
work itself lives in small modules: `_turn` (the loop), `_routing` (tools and
trust), `_prompt`, `_sessions`, `_compact`, `_watch`, `_secrets`.
"""

# long module: 415 lines, about the 400 of the rule: the facade's state, lifecycle and turns;
# its queue, plan and session methods are in _core_queue, _core_plans and _core_sessions

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ollie_nb.core._agents import resolve_agent
from ollie_nb.core._config import AgentConfig
from ollie_nb.core._core_plans import PlanMethods
from ollie_nb.core._core_queue import QueueMethods
from ollie_nb.core._core_sessions import SessionMethods
from ollie_nb.core._env import AgentEnv, build_agent_env, gate_for, wire_plan_backend
from ollie_nb.core._events import Event, EventSink, Notice, PlanMade, TurnResult, TurnStarted
from ollie_nb.core._fanout import PlanRun
from ollie_nb.core._history import TokenEstimate
from ollie_nb.core._hooks import spawn_hooks
from ollie_nb.core._plans import PlanBook
from ollie_nb.core._prompt import system_prompt
from ollie_nb.core._routing import Approver, ToolRouter, TrustGate
from ollie_nb.core._secrets import Redactor, config_secrets
from ollie_nb.core._sessions import (
    new_session_id,
)
from ollie_nb.core._subagents import SubAgents, SubagentTools
from ollie_nb.core._turn import TurnRunner, UsageTotals
from ollie_nb.core._watching import AgentWatch
from ollie_nb.llm import Message, ToolDef, backend_secrets
from ollie_nb.planning import PlanRecord, QueuePlanBackend, read_step
from ollie_nb.tools import (
    Dispatcher,
    ExecuteServer,
    Server,
    SubagentServer,
    hide_secrets,
    subprocess_env,
)

if TYPE_CHECKING:
    from ollie_nb.llm import Backend

log = logging.getLogger("ollie_nb.core")

__all__ = ["AgentCore", "Approver", "ExtraServers", "UsageTotals"]

ExtraServers = Mapping[str, Server] | Callable[[AgentConfig], Mapping[str, Server]]
"""Built-in servers a frontend adds (the notebook's `notebook` and `python`): a mapping, or
a function of the agent config called at every start and switch."""


class AgentCore(QueueMethods, PlanMethods, SessionMethods):
    """One agent: a chat backend, an env of tool servers, a history, a queue of prompts."""

    def __init__(
        self,
        backend: Backend | None = None,
        *,
        agent: str | os.PathLike[str] | AgentConfig | None = None,
        workdir: str | os.PathLike[str] | None = None,
        fallback_plan_backend: Any = None,
        queue_fallback: bool = False,
        approve: Approver | None = None,
        autosave: bool = True,
        execute: bool = True,
        name: str = "",
        extra_servers: ExtraServers | None = None,
    ) -> None:
        self.name = name  # '' = the agent config's name; task assignments use it
        self._backend = backend
        self._agent_spec = agent
        self._workdir = str(Path(workdir or os.getcwd()).resolve())
        self._fallback = fallback_plan_backend
        self.queue_fallback = queue_fallback
        self.approve = approve
        self.autosave = autosave
        self._execute = execute
        self._extra_servers = extra_servers
        self.config = AgentConfig()
        self.env: AgentEnv | None = None
        self.history: list[Message] = []
        self.usage = UsageTotals()
        self.session_id = new_session_id()
        self.session_name = ""
        self.created = time.time()
        self.state = "idle"
        self.reply = ""
        self.router = ToolRouter(Dispatcher())
        self.plan_book = PlanBook()
        self.redact = Redactor(
            lambda: (*backend_secrets(self._backend), *config_secrets(self.config))
        )
        self.watch = AgentWatch(self)
        self._notes: list[str] = []  # told to the agent at its next turn
        self._queue: deque[str] = deque()
        self._injected: list[str] = []
        self._task: asyncio.Task[TurnResult] | None = None
        self._sink: EventSink = _ignore
        self._spawn_context: list[str] = []
        self._estimate = TokenEstimate()
        self._runner = TurnRunner(self)
        self._plan_task: asyncio.Task[PlanRun] | None = None
        self.max_parallel = 0  # sub-agents at once; 0 = the agent config's maxParallel
        self.subagents = SubAgents(
            self, self.config.max_parallel, self._child_note, self._withdraw_note
        )
        self.step_limited = False  # the last turn stopped at maxSteps

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> AgentCore:
        """Load the agent config, connect its servers, wire plans, run agentSpawn hooks."""
        self.config = resolve_agent(self._agent_spec, self._workdir)
        if self._backend is None:
            self._backend = _default_backend(self.config)
        await self._build_env()
        return self

    async def __aenter__(self) -> AgentCore:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop any turn and close every server."""
        await self.stop_watching()
        self.interrupt()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        await self.subagents.aclose()
        await self._close_env()

    async def _close_env(self) -> None:
        if self.env is not None:
            self.plan_book.retire(self.env.reasoning.plans)  # plans outlive their servers
            await self.env.aclose()
            self.env = None

    async def _build_env(self) -> None:
        builtins: dict[str, Any] = {"subagent": SubagentServer(SubagentTools(self.subagents))}
        self.subagents.limit = self.max_parallel or self.config.max_parallel
        if self._execute:
            builtins["execute"] = ExecuteServer(
                lambda: self._workdir,
                env_passthrough=self.config.pass_env,
                secrets=self.redact.values,
            )
        extra = self._extra_servers
        builtins.update((extra(self.config) if callable(extra) else extra) or {})
        self.env = await build_agent_env(
            self.config,
            Dispatcher(redact=self.redact),
            self._workdir,
            self._effective_fallback(),
            builtin_servers=builtins,
            redact=self.redact,
        )
        self.env.reasoning.add_plan_listener(self._on_plan)
        self.env.reasoning.first_number = len(self.plan_book.past) + 1
        self.router = ToolRouter(self.env.dispatcher)
        await self.router.refresh()
        context, warnings = await spawn_hooks(
            self.config, self._workdir, self.session_id, self.subprocess_env()
        )
        self._spawn_context = [self.redact(c) for c in context]
        self.env.messages.extend(hide_secrets(self.redact(w)) for w in warnings)

    def _effective_fallback(self) -> Any:
        if self._fallback is not None:
            return self._fallback
        if self.queue_fallback:
            return QueuePlanBackend(self.queue)
        return None

    async def refresh_tools(self) -> None:
        """List the servers' tools again (after notebook tools were added or removed)."""
        await self.router.refresh()

    # -- public state ------------------------------------------------------

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            raise RuntimeError("the agent has not started: await core.start() first")
        return self._backend

    def set_backend(self, backend: Backend) -> None:
        """Use another chat backend from the next request on (history is kept)."""
        self._backend = backend

    @property
    def is_running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def parallel_running(self) -> bool:
        """A parallel plan run is under way (`run_plan`)."""
        return self._plan_task is not None and not self._plan_task.done()

    @property
    def workdir(self) -> str:
        return self._workdir

    def set_workdir(self, path: str | os.PathLike[str]) -> str:
        """Change the dir that execute_code and hooks run in (MCP servers keep theirs)."""
        target = Path(path).expanduser()
        if not target.is_absolute():
            target = Path(self._workdir) / target
        if not target.is_dir():
            raise NotADirectoryError(f"{target} is not a directory")
        self._workdir = str(target.resolve())
        return self._workdir

    @property
    def tools(self) -> list[ToolDef]:
        return list(self.router.defs)

    @property
    def gate(self) -> TrustGate:
        """The trust gate for this agent's config, wired task server and approval callback."""
        return gate_for(
            self.env, self.config.trusted_tools, self.approve, self.emit, self.redact.values
        )

    @property
    def plans(self) -> list[PlanRecord]:
        """Every plan of this session (restored ones first)."""
        return self.plan_book.all(self.env.reasoning.plans if self.env else [])

    @property
    def fallback_plan_backend(self) -> Any:
        return self._fallback

    async def set_fallback_plan_backend(self, backend: Any) -> None:
        """Set (or with None clear) the fallback and re-wire; a task server still wins."""
        self._fallback = backend
        if self.env is not None:
            wire_plan_backend(self.env, self._effective_fallback())

    def context_size(self) -> int:
        """Tokens the next request will send: the last reported input size, else an estimate."""
        estimate = self._estimate(self.system_prompt(), self.history)
        return max(self.usage.last_input_tokens, estimate) if self.history else estimate

    async def context_length(self) -> int | None:
        return await self.backend.context_length()

    async def list_models(self) -> list[str]:
        return await self.backend.models()

    def list_servers(self) -> dict[str, Any]:
        """Servers with their tools (first sentence of each description) and the plan wiring."""
        if self.env is None:
            return {"servers": [], "plan_backend": "", "plan_backend_reason": "not started"}
        return self.env.describe(self.router.by_server(), self.redact)

    # -- queue, inject, interrupt ---------------------------------------------

    def subprocess_env(self) -> dict[str, str]:
        """The environment hooks and execute_code get: no secrets unless the agent passes them."""
        return subprocess_env(secrets=self.redact.values(), passthrough=self.config.pass_env)

    def interrupt(self) -> bool:
        """Cancel the running turn and every sub-agent's (on the agent's loop); True if any ran."""
        children = self.subagents.interrupt_all()
        if self._plan_task is not None and not self._plan_task.done():
            self._plan_task.cancel()
            children += 1
        if self._task is None or self._task.done():
            return children > 0
        self._runner.interrupting = True
        self._task.cancel()
        return True

    def _child_note(self, text: str) -> None:
        """A sub-agent finished: the note is queued to this agent (worked now with a watch)."""
        self.queue(text)
        self.emit(Notice(text))
        self.watch.kick()

    def _withdraw_note(self, text: str) -> None:
        if text in self._queue:
            self._queue.remove(text)

    # -- turns -------------------------------------------------------------

    async def submit(self, prompt: str, on_event: EventSink | None = None) -> TurnResult:
        """Run a prompt as a turn, then drain the queue one turn per prompt.

        While a turn runs, a new prompt is queued instead (TurnResult.queued).
        """
        if self.env is None:
            await self.start()
        if self.is_running:
            self.queue(prompt)
            return TurnResult(queued=True)
        self._sink = on_event or _ignore
        self.redact.refresh()
        self._runner.interrupting = False
        task = asyncio.ensure_future(self._run_prompts(prompt))
        self._task = task
        try:
            return await task
        finally:
            self._task = None
            self._sink = _ignore
            self.state = "idle"
            self.watch.kick()  # work queued while this turn ran

    async def _run_prompts(self, prompt: str) -> TurnResult:
        first = TurnStarted(self._with_notes(self.watch.take(prompt)))
        result = await self._runner.run(first)
        done = 0
        while not result.interrupted and (self._queue or await self._steps_became_ready()):
            if result.error and self.watch.waker is not None:
                break  # the watch reports the failure and ends; the queue stays
            done += 1
            nxt = self.watch.take(self._queue.popleft())
            result = await self._run_step_prompt(nxt, done, done + len(self._queue))
        self.step_limited = result.step_limit
        if self.autosave:
            self.save()
        return result

    async def _run_step_prompt(self, prompt: str, position: int, total: int) -> TurnResult:
        """A queued prompt as a turn; a queue plan's step is marked as it goes."""
        step = read_step(prompt)
        if step is not None and step.kind == "queue":
            self.plan_book.mark_queue_step(step.step_id, "in_progress")
        step_id = step.step_id if step else ""
        start = TurnStarted(self._with_notes(prompt), True, position, total, step_id)
        result = await self._runner.run(start)
        if step is not None and step.kind == "queue":
            state = "todo" if result.interrupted else "failed" if result.error else "done"
            self.plan_book.mark_queue_step(step.step_id, state)
        return result

    async def _steps_became_ready(self) -> bool:
        """With a watcher on, read task events before the queue is called empty."""
        await self.catch_up()
        return bool(self._queue)

    def emit(self, event: Event) -> None:
        """Hand one event to the current sink; a failing sink is logged, never raised."""
        if isinstance(event, TurnStarted):
            self.subagents.new_turn()  # the model's budget of sub-agent prompts starts again
        self.watch.observe(event)
        try:
            self._sink(event)
        except Exception:
            log.exception("event sink failed on %s", type(event).__name__)

    def _on_plan(self, record: PlanRecord) -> None:
        self.plan_book.added(record)
        # the record's warning is the model's status line; the user's notice drops its label
        self.emit(PlanMade(record, record.warning.removeprefix("warning: ")))

    def find_plan(self, key: str | int | None = None) -> PlanRecord | None:
        """The latest plan, or the one with this number, goal id or step id."""
        return self.plan_book.find(self.plans, key)

    async def plan_statuses(self, record: PlanRecord) -> dict[str, str]:
        """Each step's live status: from the task server when one holds the plan, else the queue."""
        if record.kind == "queue":
            return self.plan_book.queue_statuses(record)
        reader = self.env.status_reader if self.env else None
        if record.kind == "tasks" and reader is not None and record.goal_id:
            return await reader.read_statuses(record.goal_id, record.ids)
        return {}

    def system_prompt(self) -> str:
        """Who the agent is, where it works (dir, platform, date), its agent prompt and context."""
        return system_prompt(self.env, self._workdir, self.config.prompt, self._spawn_context)

    # -- agents ------------------------------------------------------------

    async def switch_agent(
        self, spec: str | os.PathLike[str] | AgentConfig, *, trust: bool = False
    ) -> AgentEnv:
        """Tear the env down and build it again for another agent (fallback re-applied).

        `trust=True` records that the user trusts a project agent named by `spec`.
        """
        if self.is_running:
            raise RuntimeError("a turn is running; stop it before switching agents")
        config = resolve_agent(spec, self._workdir, trust=trust)
        await self.stop_watching()  # its task server is about to go
        if config.backend and config.backend != getattr(self._backend, "name", ""):
            self._backend = _default_backend(config)
        elif config.model and self._backend is not None:
            self._backend.set_model(config.model)
        await self._close_env()
        self.config = config
        await self._build_env()
        assert self.env is not None
        return self.env


def _default_backend(config: AgentConfig) -> Backend:
    from ollie_nb.llm import backend_from_env, make_backend

    if config.backend:
        return make_backend(config.backend, model=config.model or None)
    backend = backend_from_env()
    if config.model:
        backend.set_model(config.model)
    return backend


def _ignore(event: Event) -> None:
    return None
