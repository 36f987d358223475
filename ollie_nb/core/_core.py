"""AgentCore: the facade over the turn loop, the prompt queue, tools, plans and sessions.

Frontend-agnostic and async: a plain script drives it with asyncio.run, the
notebook runtime drives it from its own loop thread. Every tool call goes
through the env's Dispatcher; every event goes to the `on_event` sink. The
work itself lives in small modules: `_turn` (the loop), `_routing` (tools and
trust), `_prompt`, `_sessions`, `_compact`, `_watch`, `_secrets`.
"""

# long module: the facade, about fifty short methods that each hand one job to its module

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
from ollie_nb.core._compact import (
    Compaction,
    archive,
    archive_path,
    compact_result,
    keep_budget,
    summarise,
)
from ollie_nb.core._config import AgentConfig, ConfigError
from ollie_nb.core._env import AgentEnv, build_agent_env, wire_plan_backend
from ollie_nb.core._events import Event, EventSink, TurnResult
from ollie_nb.core._fanout import ParallelRun, PlanRun, QueueSteps, StepStore, TaskSteps
from ollie_nb.core._history import estimate_tokens
from ollie_nb.core._hooks import spawn_hooks
from ollie_nb.core._plans import PlanBook
from ollie_nb.core._prompt import system_prompt
from ollie_nb.core._routing import Approver, ToolRouter, TrustGate
from ollie_nb.core._secrets import Redactor
from ollie_nb.core._sessions import (
    SavedSession,
    SessionInfo,
    list_sessions,
    load_session,
    new_session_id,
    save_session,
    session_payload,
    sessions_dir,
)
from ollie_nb.core._subagents import SubAgents, SubagentTools
from ollie_nb.core._turn import CONTINUE_PROMPT, TurnRunner, UsageTotals, params
from ollie_nb.core._watch import TaskEventWatcher
from ollie_nb.core._watching import AgentWatch
from ollie_nb.llm import Message, ToolDef, backend_secrets
from ollie_nb.planning import PlanRecord, QueuePlanBackend, read_step
from ollie_nb.tools import (
    Dispatcher,
    ExecuteServer,
    Server,
    SubagentServer,
    TrustAdvice,
    subprocess_env,
)

if TYPE_CHECKING:
    from ollie_nb.llm import Backend

log = logging.getLogger("ollie_nb.core")

__all__ = ["AgentCore", "Approver", "ExtraServers", "UsageTotals"]

ExtraServers = Mapping[str, Server] | Callable[[AgentConfig], Mapping[str, Server]]
"""Built-in servers a frontend adds (the notebook's `notebook` and `python`): a mapping, or
a function of the agent config called at every start and switch."""


class AgentCore:
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
        self.redact = Redactor(lambda: backend_secrets(self._backend))
        self.watch = AgentWatch(self)
        self._notes: list[str] = []  # told to the agent at its next turn
        self._queue: deque[str] = deque()
        self._injected: list[str] = []
        self._task: asyncio.Task[TurnResult] | None = None
        self._sink: EventSink = _ignore
        self._spawn_context: list[str] = []
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
                secrets=lambda: backend_secrets(self._backend),
            )
        extra = self._extra_servers
        builtins.update((extra(self.config) if callable(extra) else extra) or {})
        self.env = await build_agent_env(
            self.config,
            Dispatcher(),
            self._workdir,
            self._effective_fallback(),
            builtin_servers=builtins,
        )
        self.env.reasoning.add_plan_listener(self._on_plan)
        self.env.reasoning.first_number = len(self.plan_book.past) + 1
        self.router = ToolRouter(self.env.dispatcher)
        await self.router.refresh()
        context, warnings = await spawn_hooks(
            self.config, self._workdir, self.session_id, self.subprocess_env()
        )
        self._spawn_context = [self.redact(c) for c in context]
        self.env.messages.extend(self.redact(w) for w in warnings)

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
        env = self.env

        def builtin_of(server: str) -> str | None:
            status = env.servers.get(server) if env else None
            return server if status is not None and status.state == "built-in" else None

        def advice(server: str, tool: str) -> Any:
            found = env.dispatcher.get_server(server) if env else None
            return found.tool_trust(tool) if isinstance(found, TrustAdvice) else None

        return TrustGate(
            self.config.trusted_tools,
            self.approve,
            builtin_of,
            env.task_server if env else None,
            lambda message: self.emit("error", message),
            advice,
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
        estimate = estimate_tokens(self.system_prompt(), self.history)
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

    def queue(self, prompt: str) -> int:
        """Append a prompt to the FIFO; it runs as its own turn after the current one."""
        self._queue.append(prompt)
        return len(self._queue)

    def pop_queue(self) -> str | None:
        """Take the next queued prompt (None when empty)."""
        return self.watch.take(self._queue.popleft()) if self._queue else None

    def note(self, text: str) -> None:
        """A short note the agent reads at the start of its next turn."""
        self._notes.append(text)

    def _with_notes(self, prompt: str) -> str:
        notes, self._notes = self._notes, []
        if not notes:
            return prompt
        return prompt + "\n\n[task events since your last turn]\n" + "\n".join(notes)

    @property
    def queued(self) -> list[str]:
        return list(self._queue)

    def clear_queue(self) -> int:
        count = len(self._queue)
        self._queue.clear()
        return count

    def inject(self, prompt: str) -> None:
        """Tell the running turn something: appended to the next tool result, else the next prompt."""
        if self.is_running:
            self._injected.append(prompt)
        else:
            self._queue.appendleft(prompt)

    def subprocess_env(self) -> dict[str, str]:
        """The environment hooks and execute_code get: no secrets unless the agent passes them."""
        return subprocess_env(
            secrets=backend_secrets(self._backend), passthrough=self.config.pass_env
        )

    def take_injected(self) -> list[str]:
        """The injected texts waiting for the running turn (and forget them)."""
        taken, self._injected = self._injected, []
        return taken

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
        self.emit("info", text)
        self.watch.kick()

    def _withdraw_note(self, text: str) -> None:
        if text in self._queue:
            self._queue.remove(text)

    # -- parallel plan runs ----------------------------------------------------

    async def run_plan(
        self,
        parallel: int | None = None,
        key: str | int | None = None,
        on_event: EventSink | None = None,
    ) -> PlanRun:
        """Work a plan's steps in sub-agents, `parallel` at once (default maxParallel).

        Every ready step is claimed and handed to a child; newly ready steps follow
        until all are done or one fails. `interrupt()` stops it and every child.
        """
        if self.env is None:
            await self.start()
        record = self.find_plan(key)
        if record is None:
            raise ValueError("there is no plan yet: ask for one first")
        if self._plan_task is not None and not self._plan_task.done():
            raise RuntimeError("a parallel run is under way; stop it first")
        store = self._step_store(record)
        if record.kind == "queue":  # its children work the steps: the queue's copies go
            kept = [p for p in self._queue if (s := read_step(p)) is None or s.kind != "queue"]
            self._queue = deque(kept)
        width = parallel or self.max_parallel or self.subagents.limit
        owner = f"{self.agent_name}@{self.session_id[-4:]}"
        sink = on_event or _ignore
        run = ParallelRun(record, store, self.subagents, width, owner, sink, self.watch.worked.add)
        self._plan_task = asyncio.ensure_future(run.run())
        try:
            result = await self._plan_task
        finally:
            self._plan_task = None
        if result.failed or result.interrupted:
            self.note(result.summary)  # the agent reads it at its next turn
        return result

    def _step_store(self, record: PlanRecord) -> StepStore:
        env = self.env
        assert env is not None
        if record.kind == "queue":
            return QueueSteps(
                lambda: self.plan_book.queue_statuses(record), self.plan_book.mark_queue_step
            )
        if record.kind != "tasks" or env.task_server is None:
            raise ValueError(
                f"plan {record.number} is kept in the conversation only; "
                "a parallel run needs a task server or the queue fallback"
            )
        server = env.task_server
        atomic = "task_claim" in env.servers[server].tools
        return TaskSteps(
            record,
            lambda tool, args: env.dispatcher.dispatch(server, tool, args),
            lambda: self.plan_statuses(record),
            atomic,
        )

    # -- task events (event-driven planning) ----------------------------------

    @property
    def agent_name(self) -> str:
        """The name task assignments address this agent by."""
        return self.name or self.config.name

    @property
    def watcher(self) -> TaskEventWatcher | None:
        return self.watch.watcher

    async def start_watching(
        self, interval: float = 2.0, *, on_event: EventSink | None = None, wake: bool = True
    ) -> TaskEventWatcher:
        """Watch the task server: ready and assigned steps are queued (and worked, with `wake`).

        The ready steps of our plans are queued at once (a restart finds them again);
        then each change signal (or poll, every `interval` s, without one) is read.
        `on_event` gets the watch's events and the turns the agent starts itself.
        """
        return await self.watch.start(interval, on_event, wake)

    async def stop_watching(self) -> None:
        """Stop the watch; a turn the agent started itself is interrupted."""
        await self.watch.stop()

    async def run_until_idle(self, timeout: float | None = None) -> None:
        """Wait until nothing is queued or running and the watch has read every event."""
        await self.watch.until_idle(timeout)

    async def catch_up(self) -> None:
        """With a watcher on, be current: read the events (or let a read under way finish)."""
        if self.watcher is None or not self.watcher.running:
            return
        await self.watcher.catch_up()

    async def run_queue(self, on_event: EventSink | None = None) -> TurnResult | None:
        """Work the queued prompts now (one turn each); after a maxSteps stop, continue that work.

        None when there is nothing to run.
        """
        await self.catch_up()
        prompt = self.pop_queue()
        if prompt is None and self.step_limited:
            prompt = CONTINUE_PROMPT
        return None if prompt is None else await self.submit(prompt, on_event)

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
        result = await self._runner.run(self._with_notes(self.watch.take(prompt)), {})
        done = 0
        while not result.interrupted and (self._queue or await self._steps_became_ready()):
            if result.error and self.watch.waker is not None:
                break  # the watch reports the failure and ends; the queue stays
            done += 1
            nxt = self.watch.take(self._queue.popleft())
            meta = {"queued": True, "step": done, "total": done + len(self._queue)}
            result = await self._run_step_prompt(nxt, meta)
        self.step_limited = result.step_limit
        if self.autosave:
            self.save()
        return result

    async def _run_step_prompt(self, prompt: str, meta: dict[str, Any]) -> TurnResult:
        """A queued prompt as a turn; a queue plan's step is marked as it goes."""
        step = read_step(prompt)
        if step is not None and step.kind == "queue":
            self.plan_book.mark_queue_step(step.step_id, "in_progress")
        qid = step.step_id if step else ""
        result = await self._runner.run(self._with_notes(prompt), {**meta, "qid": qid})
        if step is not None and step.kind == "queue":
            state = "todo" if result.interrupted else "failed" if result.error else "done"
            self.plan_book.mark_queue_step(step.step_id, state)
        return result

    async def _steps_became_ready(self) -> bool:
        """With a watcher on, read task events before the queue is called empty."""
        await self.catch_up()
        return bool(self._queue)

    def emit(self, kind: str, text: str = "", **data: Any) -> None:
        """Hand one event to the current sink; a failing sink is logged, never raised."""
        self.watch.observe(kind, data)
        try:
            self._sink(Event(kind, text, data))  # type: ignore[arg-type]
        except Exception:
            log.exception("event sink failed on %s", kind)

    def _on_plan(self, record: PlanRecord) -> None:
        self.plan_book.added(record)
        self.emit("plan", record.status, record=record)

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

    # -- history -----------------------------------------------------------

    def clear(self) -> None:
        """Forget the conversation (servers, queue and usage stay); a new session id starts."""
        self.history = []
        self.reply = ""
        self.session_id = new_session_id()
        self.session_name = ""
        self.created = time.time()
        self.plan_book = PlanBook()
        if self.env is not None:
            self.env.reasoning.plans.clear()
            self.env.reasoning.first_number = 1

    async def compact(self) -> Compaction:
        """Replace the history with the model's summary and the user's latest messages."""
        if self.is_running:
            raise RuntimeError("a turn is running; compact after it ends")
        return await self.compact_history()

    async def compact_history(self) -> Compaction:
        """Compact now (also from inside a turn): pre/postCompact hooks, archive, then save.

        A summary that comes back empty leaves the history as it was.
        """
        if not self.history:
            return Compaction(None, "nothing to compact")
        before = await self._runner.hooks("preCompact", {"messages": len(self.history)})
        extra = "\n".join(self.redact(c) for c in before.context)
        self.usage.requests += 1
        summary = await summarise(
            self.backend, self.system_prompt(), self.history, params(self.config), extra
        )
        try:
            window = await self.backend.context_length()
        except Exception:  # unknown: ollie's budget
            window = None
        done = compact_result(summary, self.history, keep_budget(window))
        if done.history is None:
            return done
        archive(self.archive_path, self.history, self.redact)
        self.history = done.history
        self.usage.last_input_tokens = 0  # the next request's size is the new history's
        after = await self._runner.hooks("postCompact", {"summary": summary})
        if after.context:
            self.history.append(Message.user("\n".join(self.redact(c) for c in after.context)))
            self.history.append(Message.assistant("Noted."))
        if self.autosave:
            self.save()
        return done

    @property
    def last_error(self) -> str:
        """The traceback of the last internal error in a turn ('' when none)."""
        return self._runner.last_error

    @property
    def archive_path(self) -> Path:
        """Where compacted-away messages go: `<session id>.archive.jsonl` beside the session."""
        return archive_path(sessions_dir() / f"{self.session_id}.json")

    # -- sessions ----------------------------------------------------------

    def session_data(self) -> dict[str, Any]:
        """The session as JSON data: history, usage, plans (secrets are redacted on save)."""
        return session_payload(self, self.plans, self._backend)

    def save(self) -> Path | None:
        """Write the session file (0600); empty sessions are not saved."""
        if not self.history:
            return None
        try:
            return save_session(self.session_data(), redact=self.redact)
        except OSError as exc:
            self.emit("error", f"could not save the session: {exc}")
            return None

    def restore(self, session_id: str) -> dict[str, Any]:
        """Load a saved session's history, usage and plans into this agent."""
        if self.is_running:
            raise RuntimeError("a turn is running; restore after it ends")
        data = load_session(session_id)
        saved = SavedSession.decode(data, session_id)
        self.history, self.usage = saved.history, saved.usage
        self.session_id, self.session_name, self.created = data["id"], saved.name, saved.created
        self.plan_book = PlanBook(saved.plans)
        if self.env is not None:
            self.env.reasoning.plans.clear()
            self.env.reasoning.first_number = len(saved.plans) + 1
        self.reply = saved.last_reply
        return data

    async def resume(self, session_id: str) -> str:
        """Restore a session and the agent it used; a note when that agent cannot come back.

        The agent (servers, hooks, trust) is switched to by the path the session
        recorded; a session of the default agent, or of the current one, switches nothing.
        """
        data = self.restore(session_id)
        name, path = str(data.get("agent") or "default"), str(data.get("agent_path") or "")
        if name == self.config.name and path == self.config.path:
            return ""
        try:
            await self.switch_agent(path or name)
        except (ConfigError, OSError) as exc:
            return (
                f"this session used the agent {name!r} ({path or 'by name'}), which could not "
                f"be loaded: {exc}; switch with %ollie agent NAME|PATH"
            )
        return f"agent: {self.config.name} (the agent this session used)"

    def rename(self, name: str) -> None:
        """Name the session (and save it, so the name sticks)."""
        self.session_name = name.strip()
        self.save()

    @staticmethod
    def sessions() -> list[SessionInfo]:
        return list_sessions()


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
