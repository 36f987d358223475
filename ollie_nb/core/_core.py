"""AgentCore: one agent's assembly: its parts, wired, and the handles that reach them.

Frontend-agnostic and async: a plain script drives it with asyncio.run, the
notebook runtime drives it from its own loop thread. Every tool call goes through
the tool gateway (`ToolRouter`); every event goes to the `on_event` sink. Each part
owns its state and is reached by its handle: `core.session` (the `Session`: the
conversation and its file), `core.prompts` (the `PromptQueue`), `core.plans` (`Plans`: the plans, their review and
fallback), `core.watch` (`AgentWatch`), `core.subagents`, `core.runs` (`ParallelRuns`:
`run_plan`), `core.turns` (`TurnDriver`: the running turn, `inject`, `next_prompt`) and
`core.servers` (`ToolServers`, once started). This class builds them and the context
they share; it keeps the lifecycle and `submit`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ollie_nb.core._agents import resolve_agent
from ollie_nb.core._budget import NO_BUDGETS, Budgets, SpendBook, env_budgets
from ollie_nb.core._build_servers import ExtraServers, build_servers
from ollie_nb.core._cap_ask import CapAsk
from ollie_nb.core._config import AgentConfig
from ollie_nb.core._context import AgentContext, Phase, TurnState
from ollie_nb.core._conversation import RoundSaves
from ollie_nb.core._events import Event, EventSink, Notice, PlanMade, TurnResult, TurnStarted
from ollie_nb.core._history import UsageTotals
from ollie_nb.core._inbox_ask import beside_inbox
from ollie_nb.core._inbox_handle import CoreInbox
from ollie_nb.core._parallel_runs import ParallelRuns
from ollie_nb.core._plans import Plans
from ollie_nb.core._prompt import system_prompt
from ollie_nb.core._queue import PromptQueue
from ollie_nb.core._routing import Approver, ToolRouter
from ollie_nb.core._secrets import Redactor, config_secrets
from ollie_nb.core._session_handle import Session, SessionParts
from ollie_nb.core._subagents import SubAgents
from ollie_nb.core._tool_servers import (
    ServersDescription,
    ToolServers,
    gate_for,
)
from ollie_nb.core._tracing import tracing, tracing_from_env
from ollie_nb.core._turn_driver import TurnDriver
from ollie_nb.core._watch import AgentWatch
from ollie_nb.errors import AgentBusyError, NotStartedError
from ollie_nb.llm import ToolDef, backend_secrets
from ollie_nb.planning import (
    Origin,
    PlanRecord,
    QueuedPrompt,
    TaskClient,
)
from ollie_nb.tools import (
    Dispatcher,
)

if TYPE_CHECKING:
    from ollie_nb.llm import Backend

log = logging.getLogger("ollie_nb.core")

__all__ = ["AgentCore", "Approver", "ExtraServers", "UsageTotals"]


class AgentCore:
    """One agent: a chat backend, its tool servers, a conversation, a queue of prompts."""

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
        self._approve = approve
        self.autosave = autosave
        self._execute = execute
        self._extra_servers = extra_servers
        self.config = AgentConfig()
        self.servers: ToolServers | None = None
        self.router = ToolRouter(Dispatcher())
        self.redact = Redactor(
            lambda: (*backend_secrets(self._backend), *config_secrets(self.config))
        )
        self._sink: EventSink = _ignore
        self._spawn_context: list[str] = []
        self.user_budgets: Budgets = NO_BUDGETS  # caps a frontend sets (the notebook's traits)
        self.max_parallel = 0  # sub-agents at once; 0 = the agent config's maxParallel
        self.round_saves = RoundSaves(self._autosave)  # saves within a turn, after tool rounds
        self._assemble(fallback_plan_backend, queue_fallback)

    def _assemble(self, fallback: Any, queue_fallback: bool) -> None:
        """The parts, each handed what it needs: the handles `session`, `prompts`, `plans`,
        `watch`, `turns`, `subagents`, `runs`, and the turn's state."""
        self.prompts = PromptQueue()
        self.plans = Plans(
            self.prompts,
            lambda: self.servers,
            lambda: self.is_running,
            self._autosave,
            agent_reviews=lambda: self.config.review_plans,
            fallback=fallback,
            queue_fallback=queue_fallback,
        )
        self.session = Session(self._session_parts())
        self.watch = AgentWatch(
            self.prompts,
            self.plans,
            lambda: self.servers,
            lambda: self.agent_name,
            running=lambda: self.is_running,
            interrupt=self.interrupt,
            submit=self.submit,
            spent=lambda: self.spend.session.spend,
        )
        self.spend = SpendBook(self.budgets)
        self.inbox = CoreInbox(self._task_client)
        self.cap_ask = CapAsk(self._task_client, lambda: self.agent_name)  # off until turned on
        self.cap_ask.log = self._cap_note
        self.turn = TurnState(self.session, self.spend.session)  # what turns change
        self._context: AgentContext | None = None  # what the parts share; built at start
        self.turns = TurnDriver(
            self.turn,
            self.prompts,
            self.plans,
            self.watch,
            self.spend,
            lambda: self.context,
            lambda: self.agent_name,
            self._autosave,
        )
        self.subagents = SubAgents(
            lambda: self.context,
            self.session,
            self.config.max_parallel,
            self._child_note,
            lambda text: self.prompts.withdraw(Origin.SUBAGENT, text),
        )
        self.runs = ParallelRuns(
            self.plans,
            self.prompts,
            self.subagents,
            self.spend,
            lambda: self.servers,
            self.watch.claim,
            started=self._started,
            owner=self._owner,
            width=lambda: self.max_parallel or self.subagents.limit,
            will_ask=self.cap_ask.will_ask,
        )

    def _owner(self) -> str:
        """This kernel's agent as a task store names it: `ollie@ab12` (name @ session)."""
        return f"{self.agent_name}@{self.session.session_id[-4:]}"

    def _task_client(self) -> TaskClient | None:
        """The wired task server's client, if one is wired."""
        return self.servers.task_client if self.servers else None

    def _session_parts(self) -> SessionParts:
        """What the session saves and restores beyond its conversation."""
        return SessionParts(
            plans=self.plans,
            agent=lambda: self.config,
            backend=lambda: self._backend,
            workdir=lambda: self._workdir,
            children=lambda: self.subagents.saved(),
            histories=lambda: self.subagents.histories(),
            restore_children=lambda saved, histories: self.subagents.restore(saved, histories),
            running_plan=lambda: self.runs.plan,
            running=lambda: self.is_running,
            compact=lambda: self.turns.runner.compact(self.context),
            switch_agent=self.switch_agent,
            redact=self.redact.known_only_once,
            emit=self.emit,
        )

    def budgets(self) -> Budgets:
        """The caps in force: the agent file's, the environment's and the frontend's (the
        lowest of each binds); read at each request, so a change applies to the next one."""
        return self.config.budgets.tighter(env_budgets()).tighter(self.user_budgets)

    @property
    def context(self) -> AgentContext:
        """What this agent's parts share now (rebuilt at start, agent switch, new backend or
        workdir)."""
        if self._context is None:
            raise NotStartedError("the agent has not started: await core.start() first")
        return self._context

    def _rebuild_context(self) -> None:
        """A new context from the config, backend, servers, workdir and gate as they are now."""
        if self.servers is None or self._backend is None:
            return
        self._context = AgentContext(
            config=self.config,
            backend=self._backend,
            servers=self.servers,
            router=self.router,
            gate=gate_for(
                self.servers,
                self.config.trusted_tools,
                beside_inbox(self._approve, self._task_client, self._owner),
                self.emit,
                self.redact.values,
                lambda: self.plans.reviewing,
            ),
            redact=self.redact,
            workdir=self._workdir,
            emit=self.emit,
            spend=self.spend,
            save_round=self.round_saves.round_ended,
            save_session=self._autosave,
            save_due=self.round_saves.save_due,
            spawn_context=tuple(self._spawn_context),
            injected=self.prompts.take_injected,
            reminder=self.plans.reminder,
            cap_ask=self.cap_ask,
        )

    @property
    def approve(self) -> Approver | None:
        """Who is asked about a tool call the trust gate does not allow (None: denied)."""
        return self._approve

    @approve.setter
    def approve(self, approver: Approver | None) -> None:
        self._approve = approver
        self._rebuild_context()  # the gate asks the new approver from the next call on

    def _autosave(self) -> None:
        if self.autosave:
            self.session.save()

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> AgentCore:
        """Load the agent config, connect its servers, wire plans, run agentSpawn hooks."""
        self.config = resolve_agent(self._agent_spec, self._workdir)
        tracing_from_env()  # an OTLP endpoint in the environment turns tracing on
        if self._backend is None:
            self._backend = _default_backend(self.config)
        await self._connect_servers()
        return self

    async def _started(self) -> None:
        if self.servers is None:
            await self.start()

    async def __aenter__(self) -> AgentCore:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop any turn and close every server."""
        await self.watch.stop()
        self.interrupt()
        if self.turns.task is not None:
            await asyncio.gather(self.turns.task, return_exceptions=True)
        await self.subagents.aclose()
        await self._close_servers()

    async def _close_servers(self) -> None:
        if self.servers is not None:  # its plans stay in the PlanBook
            await self.servers.aclose()
            self.servers = None

    async def _connect_servers(self) -> None:
        self.subagents.limit = self.max_parallel or self.config.max_parallel
        built = await build_servers(
            self.config,
            lambda: self._workdir,
            self.plans.effective_fallback(),
            subagents=self.subagents,
            execute=self._execute,
            extra=self._extra_servers,
            plans=self.plans,
            redact=self.redact,
            session_id=self.session.session_id,
            on_plan=self._on_plan,
            hold_plans=lambda: self.plans.reviewing,
        )
        self.servers, self.router = built.servers, built.router
        self._spawn_context = built.spawn_context
        self._rebuild_context()

    async def refresh_tools(self) -> None:
        """List the servers' tools again (after notebook tools were added or removed)."""
        await self.router.refresh()

    # -- the backend, the workdir, the tools -------------------------------

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            raise NotStartedError("the agent has not started: await core.start() first")
        return self._backend

    def set_backend(self, backend: Backend) -> None:
        """Use another chat backend from the next request on (history is kept)."""
        self._backend = backend
        self._rebuild_context()

    @property
    def is_running(self) -> bool:
        return self.turns.running

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
        self._rebuild_context()
        return self._workdir

    @property
    def tools(self) -> list[ToolDef]:
        return list(self.router.defs)

    async def list_models(self) -> list[str]:
        return await self.backend.models()

    def list_servers(self) -> ServersDescription:
        """Servers with their tools (first sentence of each description) and the plan wiring."""
        if self.servers is None:
            return ServersDescription(plan_backend_reason="not started")
        return self.servers.describe(self.router.by_server(), self.redact)

    def interrupt(self) -> bool:
        """Cancel the running turn and every sub-agent's (on the agent's loop); True if any ran."""
        children = self.subagents.interrupt_all() + self.runs.interrupt()
        return self.turns.cancel() or children > 0

    def _child_note(self, text: str) -> None:
        """A sub-agent finished: the note is queued to this agent (worked now with a watch)."""
        self.prompts.put(QueuedPrompt(text, Origin.SUBAGENT))
        self.emit(Notice(text))
        self.watch.kick()

    # -- turns -------------------------------------------------------------

    async def submit(
        self, prompt: str | QueuedPrompt, on_event: EventSink | None = None
    ) -> TurnResult:
        """Run a prompt (text, or a queued item) as a turn, then drain the queue one turn each.

        While a turn runs, a new prompt is queued instead (TurnResult.queued).
        """
        await self._started()
        if self.is_running:
            self.prompts.put(prompt)
            return TurnResult(queued=True)
        self._sink = on_event or _ignore
        self.redact.refresh()
        try:
            return await self.turns.work(_item(prompt))
        finally:
            self._sink = _ignore
            self.turn.enter(Phase.IDLE)
            self.watch.kick()  # work queued while this turn ran

    def _cap_note(self, line: str) -> None:
        """What asking at a cap did (asked, answered, stopped): logged, and told where the
        paused work is read (a parallel run's log, else the turn's cell)."""
        log.info("%s", line)
        if not self.runs.note(line):
            self.emit(Notice(line))

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
        # the record's warning is the model's status line; the user's notice drops its label
        self.emit(PlanMade(record, record.warning.removeprefix("warning: ")))
        tracing().plan_made(self.redact, record)  # the goal id and steps join the call's span

    def system_prompt(self) -> str:
        """Who the agent is, where it works (dir, platform, date), its agent prompt and context."""
        return system_prompt(self.servers, self._workdir, self.config.prompt, self._spawn_context)

    # -- the queue on demand ---------------------------------------------------------

    @property
    def agent_name(self) -> str:
        """The name task assignments address this agent by."""
        return self.name or self.config.name

    async def run_queue(self, on_event: EventSink | None = None) -> TurnResult | None:
        """Work the queued prompts now (one turn each); after a maxSteps stop, continue that work.

        None when there is nothing to run.
        """
        item = await self.turns.next_prompt()
        return None if item is None else await self.submit(item, on_event)

    # -- agents ------------------------------------------------------------

    async def switch_agent(
        self, spec: str | os.PathLike[str] | AgentConfig, *, trust: bool = False
    ) -> ToolServers:
        """Tear the env down and build it again for another agent (fallback re-applied).

        `trust=True` records that the user trusts a project agent named by `spec`.
        """
        if self.is_running:
            raise AgentBusyError("a turn is running; stop it before switching agents")
        config = resolve_agent(spec, self._workdir, trust=trust)
        await self.watch.stop()  # its task server is about to go
        if config.backend and config.backend != getattr(self._backend, "name", ""):
            self._backend = _default_backend(config)
        elif config.model and self._backend is not None:
            self._backend.set_model(config.model)
        await self._close_servers()
        self.config = config
        await self._connect_servers()
        assert self.servers is not None
        return self.servers


def _default_backend(config: AgentConfig) -> Backend:
    from ollie_nb.llm import backend_from_env, make_backend

    if config.backend:
        return make_backend(config.backend, model=config.model or None)
    backend = backend_from_env()
    if config.model:
        backend.set_model(config.model)
    return backend


def _item(prompt: str | QueuedPrompt) -> QueuedPrompt:
    return prompt if isinstance(prompt, QueuedPrompt) else QueuedPrompt(prompt)


def _ignore(event: Event) -> None:
    return None
