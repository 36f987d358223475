"""AgentCore: the turn loop, the prompt queue, interrupts, trust, hooks, sessions.

Frontend-agnostic and async: a plain script drives it with asyncio.run, the
notebook runtime drives it from its own loop thread. Every tool call goes
through the env's Dispatcher; every event goes to the `on_event` sink.
"""

from __future__ import annotations

import asyncio
import fnmatch
import inspect
import json
import logging
import os
import platform
import re
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ollie_nb.agent._config import AgentConfig, ConfigError, load_agent_config
from ollie_nb.agent._env import AgentEnv, build_agent_env, wire_plan_backend
from ollie_nb.agent._events import Event, EventSink, TurnResult
from ollie_nb.agent._hooks import run_hooks
from ollie_nb.agent._sessions import (
    SessionError,
    SessionInfo,
    list_sessions,
    load_session,
    new_session_id,
    save_session,
)
from ollie_nb.agent._watch import TaskEventWatcher
from ollie_nb.llm import GenerationParams, LLMError, Message, ToolCall, ToolDef
from ollie_nb.planning import PlanRecord, PlanStep, QueuePlanBackend, format_plan
from ollie_nb.tools import Dispatcher, ExecuteServer, ToolResult, exc_summary

if TYPE_CHECKING:
    from ollie_nb.llm import Backend

log = logging.getLogger("ollie_nb.agent")

Approver = Callable[[str, dict[str, Any]], "bool | Awaitable[bool]"]

INTERRUPTED_NOTE = "[interrupted by the user]"
CANCELLED_RESULT = "error: cancelled: the user interrupted the turn before this call finished"
MAX_STOP_CONTINUES = 5
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.I)

COMPACT_PROMPT = (
    "Summarise our conversation so far for your own later use: the goal, decisions made, "
    "the current plan and each step's state, facts learned, and open questions. "
    "Be complete but brief; plain text."
)


@dataclass
class UsageTotals:
    """Tokens and requests used in this session."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    last_input_tokens: int = 0

    def __str__(self) -> str:
        return (
            f"{self.requests} requests, {self.input_tokens} tokens in, "
            f"{self.output_tokens} tokens out"
        )


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
    ) -> None:
        self._backend = backend
        self._agent_spec = agent
        self._workdir = str(Path(workdir or os.getcwd()).resolve())
        self._fallback = fallback_plan_backend
        self.queue_fallback = queue_fallback
        self.approve = approve
        self.autosave = autosave
        self._execute = execute
        self.config = AgentConfig()
        self.env: AgentEnv | None = None
        self.history: list[Message] = []
        self.usage = UsageTotals()
        self.session_id = new_session_id()
        self.session_name = ""
        self.created = time.time()
        self.state = "idle"
        self.reply = ""
        self._queue: deque[str] = deque()
        self._injected: list[str] = []
        self._task: asyncio.Task[TurnResult] | None = None
        self._interrupting = False
        self._sink: EventSink = _ignore
        self._partial: list[str] = []
        self._spawn_context: list[str] = []
        self._tool_routes: dict[str, tuple[str, str]] = {}
        self._tool_defs: list[ToolDef] = []
        self._past_plans: list[PlanRecord] = []  # plans of envs that are gone, or restored
        self.queue_status: dict[str, str] = {}  # q-id -> status of the queued plan being worked
        self.watcher: TaskEventWatcher | None = None

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> AgentCore:
        """Load the agent config, connect its servers, wire plans, run agentSpawn hooks."""
        self.config = self._resolve_agent(self._agent_spec)
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
        if self.env is not None:
            self._past_plans = self.plans  # plans outlive the servers that made them
            await self.env.aclose()
            self.env = None

    async def _build_env(self) -> None:
        builtins: dict[str, Any] = {}
        if self._execute:
            builtins["execute"] = ExecuteServer(lambda: self._workdir)
        self.env = await build_agent_env(
            self.config,
            Dispatcher(),
            self._workdir,
            self._effective_fallback(),
            builtin_servers=builtins,
        )
        self.env.reasoning.add_plan_listener(self._on_plan)
        self.env.reasoning.first_number = len(self._past_plans) + 1
        await self._refresh_tools()
        self._spawn_context = []
        if self.config.hooks.get("agentSpawn"):
            outcome = await run_hooks(
                "agentSpawn",
                self.config.hooks["agentSpawn"],
                {"cwd": self._workdir, "session_id": self.session_id, "agent": self.config.name},
                self._workdir,
            )
            self._spawn_context = [self.redact(c) for c in outcome.context]
            self.env.messages.extend(outcome.warnings)

    def _effective_fallback(self) -> Any:
        if self._fallback is not None:
            return self._fallback
        if self.queue_fallback:
            return QueuePlanBackend(self.queue)
        return None

    async def _refresh_tools(self) -> None:
        """Map model-visible tool names to (server, tool); later duplicates get a server prefix."""
        assert self.env is not None
        routes: dict[str, tuple[str, str]] = {}
        defs: list[ToolDef] = []
        for info in await self.env.dispatcher.list_tools():
            name = _TOOL_NAME.sub("_", info.name)[:64]
            if name in routes:
                name = _TOOL_NAME.sub("_", f"{info.server}__{info.name}")[:64]
            if name in routes:
                continue
            routes[name] = (info.server, info.name)
            defs.append(ToolDef(name, info.description, info.input_schema))
        self._tool_routes, self._tool_defs = routes, defs

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
        return list(self._tool_defs)

    @property
    def plans(self) -> list[PlanRecord]:
        """Every plan of this session (restored ones first)."""
        live = self.env.reasoning.plans if self.env else []
        return [*self._past_plans, *live]

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
        chars = len(self.system_prompt()) + sum(
            len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in self.history
        )
        estimate = chars // 4
        return max(self.usage.last_input_tokens, estimate) if self.history else estimate

    async def context_length(self) -> int | None:
        return await self.backend.context_length()

    async def list_models(self) -> list[str]:
        return await self.backend.models()

    def list_servers(self) -> dict[str, Any]:
        """Servers with their tools (first sentence of each description) and the plan wiring."""
        if self.env is None:
            return {"servers": [], "plan_backend": "", "plan_backend_reason": "not started"}
        by_server: dict[str, list[tuple[str, str]]] = {}
        for model_name, (server, _tool) in self._tool_routes.items():
            description = next((d.description for d in self._tool_defs if d.name == model_name), "")
            by_server.setdefault(server, []).append((model_name, _first_sentence(description)))
        servers = []
        for name, status in self.env.servers.items():
            servers.append(
                {
                    "name": name,
                    "state": status.state,
                    "transport": status.transport
                    or ("built-in" if status.state == "built-in" else ""),
                    "detail": status.detail,
                    "seconds": round(status.seconds, 3),
                    "tools": by_server.get(name, []),
                }
            )
        return {
            "servers": servers,
            "plan_backend": self.env.reasoning.plan_backend_label,
            "plan_backend_reason": self.env.plan_backend_reason,
            "task_server": self.env.task_server,
            "messages": list(self.env.messages),
        }

    # -- queue, inject, interrupt ---------------------------------------------

    def queue(self, prompt: str) -> int:
        """Append a prompt to the FIFO; it runs as its own turn after the current one."""
        self._queue.append(prompt)
        return len(self._queue)

    def pop_queue(self) -> str | None:
        """Take the next queued prompt (None when empty)."""
        return self._queue.popleft() if self._queue else None

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

    def interrupt(self) -> bool:
        """Cancel the running turn (call on the agent's loop); True if one was running."""
        if self._task is None or self._task.done():
            return False
        self._interrupting = True
        self._task.cancel()
        return True

    # -- task events (event-driven planning) ----------------------------------

    async def start_watching(self, interval: float = 2.0) -> TaskEventWatcher:
        """Queue a step prompt whenever a step of our plans becomes ready on the task server."""
        await self.stop_watching()
        watcher = TaskEventWatcher(self, interval)
        await watcher.start()
        self.watcher = watcher
        return watcher

    async def stop_watching(self) -> None:
        if self.watcher is not None:
            await self.watcher.stop()
            self.watcher = None

    async def run_queue(self, on_event: EventSink | None = None) -> TurnResult | None:
        """Work the queued prompts now (one turn each); None when the queue is empty."""
        if self.watcher is not None and self.watcher.running:
            await self.watcher.poll()  # catch up now rather than at the next interval
        prompt = self.pop_queue()
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
        self._interrupting = False
        task = asyncio.ensure_future(self._run_prompts(prompt))
        self._task = task
        try:
            return await task
        finally:
            self._task = None
            self._sink = _ignore
            self.state = "idle"

    async def _run_prompts(self, prompt: str) -> TurnResult:
        result = await self._turn(prompt, {})
        done = 0
        while not result.interrupted and (self._queue or await self._steps_became_ready()):
            done += 1
            nxt = self._queue.popleft()
            qid = _queue_id(nxt)
            if qid:
                self.queue_status[qid] = "in_progress"
            result = await self._turn(
                nxt, {"queued": True, "step": done, "total": done + len(self._queue), "qid": qid}
            )
            if qid:
                self.queue_status[qid] = (
                    "todo" if result.interrupted else "failed" if result.error else "done"
                )
        if self.autosave:
            self.save()
        return result

    async def _steps_became_ready(self) -> bool:
        """With a watcher on, read task events before the queue is called empty."""
        if self.watcher is None or not self.watcher.running:
            return False
        try:
            await self.watcher.poll()
        except Exception as exc:  # the watch's own loop logs it too
            log.warning("task events: %s", exc)
        return bool(self._queue)

    def _emit(self, kind: str, text: str = "", **data: Any) -> None:
        try:
            self._sink(Event(kind, text, data))  # type: ignore[arg-type]
        except Exception:
            log.exception("event sink failed on %s", kind)

    async def _turn(self, prompt: str, meta: dict[str, Any]) -> TurnResult:
        self._emit("turn_start", prompt, prompt=prompt, **meta)
        hooks = self.config.hooks
        if hooks.get("userPromptSubmit"):
            outcome = await run_hooks(
                "userPromptSubmit",
                hooks["userPromptSubmit"],
                {"prompt": prompt, "cwd": self._workdir, "session_id": self.session_id},
                self._workdir,
            )
            for warning in outcome.warnings:
                self._emit("info", warning)
            if outcome.block:
                reason = self.redact(outcome.block)
                self._emit("error", f"prompt blocked by a userPromptSubmit hook: {reason}")
                self._emit("turn_end", "", blocked=reason, interrupted=False)
                return TurnResult(blocked=reason)
            if outcome.context:
                prompt += "\n\n" + "\n".join(self.redact(c) for c in outcome.context)
        self.history.append(Message.user(prompt))
        steps = stop_continues = 0
        self._partial = []
        try:
            while True:
                if steps >= self.config.max_steps:
                    note = f"stopped after {steps} model calls (maxSteps {self.config.max_steps})"
                    self._emit("info", note)
                    self.history.append(Message.assistant(f"[{note}]"))
                    return self._end(TurnResult(reply=self.reply, steps=steps))
                steps += 1
                try:
                    text, calls = await self._respond()
                except LLMError as exc:
                    message = self.redact(str(exc))
                    self._emit("error", message)
                    self.history.append(Message.assistant(f"[no reply: {message}]"))
                    return self._end(TurnResult(error=message, steps=steps))
                self.history.append(Message.assistant(text, calls))
                self._partial = []
                if text:
                    self.reply = text
                if not calls:
                    if hooks.get("stop") and stop_continues < MAX_STOP_CONTINUES:
                        outcome = await run_hooks(
                            "stop",
                            hooks["stop"],
                            {"reply": text, "cwd": self._workdir, "session_id": self.session_id},
                            self._workdir,
                        )
                        for warning in outcome.warnings:
                            self._emit("info", warning)
                        if outcome.block:
                            stop_continues += 1
                            reason = self.redact(outcome.block)
                            self._emit("info", f"a stop hook asked to continue: {reason}")
                            self.history.append(Message.user(reason))
                            continue
                    if self._injected:
                        self.history.append(Message.user("\n".join(self._take_injected())))
                        continue
                    return self._end(TurnResult(reply=text, steps=steps))
                for call in calls:
                    result = await self._run_call(call)
                    content = result.text
                    if self._injected:
                        content += "\n\n[user interruption] " + "\n".join(self._take_injected())
                    self.history.append(Message.tool(call.id, content, name=call.name))
        except asyncio.CancelledError:
            self._record_interruption()
            self._emit("info", "interrupted")
            if not self._interrupting:
                raise
            _uncancel()
            return self._end(TurnResult(reply="", interrupted=True, steps=steps))

    def _end(self, result: TurnResult) -> TurnResult:
        self.state = "idle"
        self._emit(
            "turn_end",
            result.reply,
            interrupted=result.interrupted,
            error=result.error,
            steps=result.steps,
        )
        return result

    def _take_injected(self) -> list[str]:
        taken, self._injected = self._injected, []
        return taken

    def _record_interruption(self) -> None:
        """Leave the history consistent: every call answered, and a note that ends the turn."""
        last_calls = next(
            (m for m in reversed(self.history) if m.role == "assistant" and m.tool_calls), None
        )
        if last_calls is not None:
            answered = {
                m.tool_call_id
                for m in self.history[self.history.index(last_calls) :]
                if m.role == "tool"
            }
            for call in last_calls.tool_calls:
                if call.id not in answered:
                    self.history.append(Message.tool(call.id, CANCELLED_RESULT, name=call.name))
        partial = "".join(self._partial).strip()
        self._partial = []
        note = f"{partial} {INTERRUPTED_NOTE}" if partial else INTERRUPTED_NOTE
        if (
            self.history
            and self.history[-1].role == "assistant"
            and not self.history[-1].tool_calls
        ):
            return  # the reply was complete; nothing else to mend
        self.history.append(Message.assistant(note))

    async def _respond(self) -> tuple[str, tuple[ToolCall, ...]]:
        """Stream one model response; emit text, usage and retries as they come."""
        messages = [Message.system(self.system_prompt()), *self.history]
        calls: tuple[ToolCall, ...] = ()
        self.state = "waiting"
        self.usage.requests += 1
        stream = self.backend.chat_stream(messages, self._tool_defs, self._params())
        try:
            async for event in stream:
                if event.kind == "text":
                    self.state = "streaming"
                    self._partial.append(event.text)
                    self._emit("assistant", event.text)
                elif event.kind == "tool_calls":
                    calls = event.tool_calls
                elif event.kind == "usage" and event.usage is not None:
                    self.usage.input_tokens += event.usage.input_tokens
                    self.usage.output_tokens += event.usage.output_tokens
                    self.usage.last_input_tokens = event.usage.input_tokens
                    self._emit(
                        "usage",
                        str(self.usage),
                        input_tokens=event.usage.input_tokens,
                        output_tokens=event.usage.output_tokens,
                        total_input=self.usage.input_tokens,
                        total_output=self.usage.output_tokens,
                        requests=self.usage.requests,
                    )
                elif event.kind == "retry":
                    self._emit("retry", event.reason, attempt=event.attempt, delay=event.delay)
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                await closer()
        return "".join(self._partial), calls

    async def _run_call(self, call: ToolCall) -> ToolResult:
        route = self._tool_routes.get(call.name)
        server = route[0] if route else ""
        args, bad_json = _parse_arguments(call.arguments)
        self._emit("call", call.name, id=call.id, tool=call.name, server=server, args=args)
        self.state = f"tool:{call.name}"
        started = time.perf_counter()
        result = await self._checked_call(call, route, args, bad_json)
        result = ToolResult(self.redact(result.text), result.is_error)
        self._emit(
            "tool",
            result.text,
            id=call.id,
            tool=call.name,
            server=server,
            is_error=result.is_error,
            seconds=round(time.perf_counter() - started, 3),
        )
        return result

    async def _checked_call(
        self, call: ToolCall, route: tuple[str, str] | None, args: Any, bad_json: str
    ) -> ToolResult:
        if not call.name:
            return ToolResult.error("the tool call has no name; call one of the offered tools")
        if route is None:
            known = ", ".join(sorted(self._tool_routes))
            return ToolResult.error(f"unknown tool {call.name!r}; available tools: {known}")
        if bad_json:
            return ToolResult.error(
                f"arguments of {call.name} are not valid JSON ({bad_json}); send one JSON object"
            )
        if not isinstance(args, dict):
            return ToolResult.error(
                f"arguments of {call.name} must be a JSON object, got {type(args).__name__}"
            )
        server, tool = route
        if not await self._allowed(call.name, tool, server, args):
            return ToolResult.error(
                f"{call.name} is not in trustedTools and was not approved; it did not run"
            )
        assert self.env is not None
        return await self.env.dispatcher.dispatch(server, tool, args)

    async def _allowed(self, name: str, tool: str, server: str, args: dict[str, Any]) -> bool:
        trusted = self.config.trusted_tools
        # The built-in reasoning server has no side effects; an MCP tool that merely has a
        # reasoning_* name is checked like any other.
        builtin = (
            self.env is not None and self.env.dispatcher.get_server(server) is self.env.reasoning
        )
        if trusted is None or builtin:
            return True
        if any(fnmatch.fnmatchcase(n, pattern) for pattern in trusted for n in (name, tool)):
            return True
        if self.approve is None:
            return False
        try:
            answer = self.approve(name, args)
            if inspect.isawaitable(answer):
                answer = await answer
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._emit("error", f"approval callback failed: {exc_summary(exc)}")
            return False
        return bool(answer)

    def _params(self) -> GenerationParams:
        c = self.config
        return GenerationParams(
            max_tokens=c.max_tokens,
            temperature=c.temperature,
            frequency_penalty=c.frequency_penalty,
            presence_penalty=c.presence_penalty,
            top_p=c.top_p,
        )

    def _on_plan(self, record: PlanRecord) -> None:
        if record.ids and record.ids[0] == "q1":
            self.queue_status = dict.fromkeys(record.ids, "todo")
        self._emit("plan", record.status, record=record)

    def find_plan(self, key: str | int | None = None) -> PlanRecord | None:
        """The latest plan, or the one with this number, goal id or step id."""
        plans = self.plans
        if key in (None, ""):
            return plans[-1] if plans else None
        text = str(key).lstrip("#")
        for record in reversed(plans):
            if text == str(record.number) or text == record.goal_id or text in record.ids:
                return record
        return None

    async def plan_statuses(self, record: PlanRecord) -> dict[str, str]:
        """Each step's live status: from the task server when one holds the plan, else the queue."""
        if not record.ids:
            return {}
        if record.ids[0] == "q1":
            return {i: s for i, s in self.queue_status.items() if i in record.ids}
        backend = self.env.reasoning.plan_backend if self.env else None
        target = getattr(backend, "target", None)
        if record.goal_id and hasattr(target, "read_statuses"):
            return await target.read_statuses(record.goal_id, record.ids)
        return {}

    def system_prompt(self) -> str:
        """Who the agent is, where it works (dir, platform, date), its agent prompt and context."""
        env = self.env
        if env is not None and env.task_server:
            plans = f"Plans are persisted as tasks on the '{env.task_server}' MCP server."
        elif env is not None and env.reasoning.plan_backend is not None:
            plans = f"Plans are handed to {env.reasoning.plan_backend_label}."
        else:
            plans = "Plans stay in this conversation only."
        parts = [
            "You are ollie, an agent that works inside a Jupyter notebook kernel with tools.",
            f"Work dir: {self._workdir}",
            f"Platform: {platform.system()} {platform.machine()}, Python {sys.version.split()[0]}",
            f"Date: {time.strftime('%Y-%m-%d')}",
            "For work of more than a couple of steps, call reasoning_plan first (goal, steps, "
            "after = 0-based indexes of earlier steps), then work the steps in order. " + plans,
        ]
        if self.config.prompt:
            parts.append(self.config.prompt)
        parts.extend(self._spawn_context)
        return "\n".join(parts)

    # -- agents ------------------------------------------------------------

    def _resolve_agent(self, spec: Any) -> AgentConfig:
        if isinstance(spec, AgentConfig):
            return spec
        if spec is None or spec == "default":
            return AgentConfig()
        text = os.fspath(spec)
        path = Path(text).expanduser()
        if text.endswith(".json") or os.sep in text or path.exists():
            if not path.is_absolute():
                path = Path(self._workdir) / path
            return load_agent_config(path)
        for directory in agent_dirs(self._workdir):
            candidate = directory / f"{text}.json"
            if candidate.exists():
                return load_agent_config(candidate, name=text)
        known = ", ".join(list_agents(self._workdir)) or "none"
        raise ConfigError(
            f"no agent named {text!r} (agents: {known}; or give a path to a JSON file)"
        )

    async def switch_agent(self, spec: str | os.PathLike[str] | AgentConfig) -> AgentEnv:
        """Tear the env down and build it again for another agent (fallback re-applied)."""
        if self.is_running:
            raise RuntimeError("a turn is running; stop it before switching agents")
        config = self._resolve_agent(spec)
        await self.stop_watching()  # its task server is about to go
        if config.backend and config.backend != getattr(self._backend, "name", ""):
            self._backend = _default_backend(config)
        elif config.model and self._backend is not None:
            self._backend.set_model(config.model)
        if self.env is not None:
            await self.env.aclose()
            self._past_plans = self.plans
        self.config = config
        self.env = None
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
        self._past_plans = []
        if self.env is not None:
            self.env.reasoning.plans.clear()
            self.env.reasoning.first_number = 1

    async def compact(self) -> str:
        """Replace the history with the model's own summary of it."""
        if self.is_running:
            raise RuntimeError("a turn is running; compact after it ends")
        if not self.history:
            return ""
        messages = [
            Message.system(self.system_prompt()),
            *self.history,
            Message.user(COMPACT_PROMPT),
        ]
        parts: list[str] = []
        self.usage.requests += 1
        async for event in self.backend.chat_stream(messages, (), self._params()):
            if event.kind == "text":
                parts.append(event.text)
        summary = "".join(parts).strip() or "(the model gave no summary)"
        self.history = [
            Message.user(f"Summary of the conversation so far:\n{summary}"),
            Message.assistant("Noted; I will continue from this summary."),
        ]
        if self.autosave:
            self.save()
        return summary

    # -- sessions ----------------------------------------------------------

    def session_data(self) -> dict[str, Any]:
        """The session as JSON data: history, usage, plans (secrets are redacted on save)."""
        return {
            "id": self.session_id,
            "name": self.session_name,
            "created": self.created,
            "updated": time.time(),
            "agent": self.config.name,
            "agent_path": self.config.path,
            "backend": getattr(self._backend, "name", ""),
            "model": getattr(self._backend, "model", ""),
            "workdir": self._workdir,
            "history": [m.to_dict() for m in self.history],
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "requests": self.usage.requests,
            },
            "plans": [_plan_to_dict(p) for p in self.plans],
        }

    def save(self) -> Path | None:
        """Write the session file (0600); empty sessions are not saved."""
        if not self.history:
            return None
        try:
            return save_session(self.session_data(), redact=self.redact)
        except OSError as exc:
            self._emit("error", f"could not save the session: {exc}")
            return None

    def restore(self, session_id: str) -> SessionInfo | dict[str, Any]:
        """Load a saved session's history, usage and plans into this agent."""
        if self.is_running:
            raise RuntimeError("a turn is running; restore after it ends")
        data = load_session(session_id)
        try:
            history = [Message.from_dict(m) for m in data["history"]]
            plans = [_plan_from_dict(p) for p in data.get("plans", [])]
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionError(f"session {session_id}: malformed content ({exc})") from None
        self.history = history
        self.session_id = data["id"]
        self.session_name = data.get("name", "")
        self.created = float(data.get("created", time.time()))
        usage = data.get("usage", {})
        self.usage = UsageTotals(
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
            int(usage.get("requests", 0)),
        )
        self._past_plans = plans
        if self.env is not None:
            self.env.reasoning.plans.clear()
            self.env.reasoning.first_number = len(plans) + 1
        self.reply = next(
            (m.content for m in reversed(history) if m.role == "assistant" and m.content), ""
        )
        return data

    def rename(self, name: str) -> None:
        """Name the session (and save it, so the name sticks)."""
        self.session_name = name.strip()
        self.save()

    @staticmethod
    def sessions() -> list[SessionInfo]:
        return list_sessions()

    # -- secrets -----------------------------------------------------------

    def redact(self, text: str) -> str:
        """Replace secret values (API keys, tokens from the environment) with ***."""
        for secret in _secret_values(self._backend):
            if secret in text:
                text = text.replace(secret, "***")
        return text


def _secret_values(backend: Any) -> list[str]:
    values = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and v and len(v) >= 8]
    key = getattr(backend, "_api_key", None) or getattr(backend, "api_key", None)
    if isinstance(key, str) and len(key) >= 8:
        values.append(key)
    return sorted(set(values), key=len, reverse=True)


def agent_dirs(workdir: str) -> list[Path]:
    """Where named agents live: `<workdir>/.ollie/agents`, then the user config dir's `agents`."""
    import platformdirs

    user = os.environ.get("OLLIE_CONFIG_DIR") or platformdirs.user_config_dir(
        "ollie_nb", appauthor=False
    )
    return [Path(workdir) / ".ollie" / "agents", Path(user) / "agents"]


def list_agents(workdir: str) -> list[str]:
    """Names of the agents found in agent_dirs, plus `default`."""
    names = {"default"}
    for directory in agent_dirs(workdir):
        if directory.is_dir():
            names.update(p.stem for p in directory.glob("*.json"))
    return sorted(names)


def _default_backend(config: AgentConfig) -> Backend:
    from ollie_nb.llm import backend_from_env, make_backend

    if config.backend:
        return make_backend(config.backend, model=config.model or None)
    backend = backend_from_env()
    if config.model:
        backend.set_model(config.model)
    return backend


def _plan_to_dict(record: PlanRecord) -> dict[str, Any]:
    return {
        "number": record.number,
        "goal": record.goal,
        "steps": [{"title": s.title, "body": s.body, "after": list(s.after)} for s in record.steps],
        "ids": list(record.ids),
        "goal_id": record.goal_id,
        "status": record.status,
        "backend": record.backend,
        "warning": record.warning,
        "created": record.created,
    }


def _plan_from_dict(data: Mapping[str, Any]) -> PlanRecord:
    steps = tuple(
        PlanStep(s["title"], s.get("body", ""), tuple(s.get("after", ()))) for s in data["steps"]
    )
    ids = tuple(data.get("ids", ()))
    status = data.get("status", "")
    goal_id = data.get("goal_id", "")
    return PlanRecord(
        number=int(data["number"]),
        goal=data["goal"],
        steps=steps,
        ids=ids,
        goal_id=goal_id,
        status=status,
        backend=data.get("backend", ""),
        warning=data.get("warning", ""),
        text=format_plan(data["goal"], steps, ids or None, status, goal_id),
        created=float(data.get("created", 0)),
    )


def _queue_id(prompt: str) -> str:
    match = re.search(r"^Step \d+ of \d+ \[(q\d+)\]", prompt, re.MULTILINE)
    return match.group(1) if match else ""


def _parse_arguments(raw: str) -> tuple[Any, str]:
    """The decoded arguments (raw text when undecodable) and the JSON error, if any."""
    if not raw.strip():
        return {}, ""
    try:
        return json.loads(raw), ""
    except json.JSONDecodeError as exc:
        return raw, f"{exc.msg} at character {exc.pos}"
    except RecursionError:  # json.loads recurses per nesting level
        return raw, "nested too deeply"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text[:120]


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None and hasattr(task, "uncancel"):
        task.uncancel()


def _ignore(event: Event) -> None:
    return None
