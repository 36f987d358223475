"""Tool routing: model-visible names to (server, tool), argument checks, and the trust gate.

Every call the model makes goes through the router (the turn's tool step calls it):
`refusal` answers malformed calls with a readable error, `approval` asks the trust gate,
`dispatch` goes through the env's one Dispatcher. Nothing here raises for a bad call;
the model always gets a result.
"""

from __future__ import annotations

import asyncio
import fnmatch
import inspect
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ollie_nb.llm import ToolCall, ToolDef
from ollie_nb.planning import (
    TASK_CLAIM,
    TASK_CREATE,
    TASK_DEP,
    TASK_EDIT,
    TASK_EVENTS,
    TASK_HEARTBEAT,
    TASK_LIST,
    TASK_READ,
    TASK_TOOLS,
    TASK_UPDATE,
    HeldClaims,
    StepRef,
    without_tokens,
)
from ollie_nb.redaction import mask_args, secret_paths
from ollie_nb.tools import Dispatcher, ToolResult, Trust, exc_summary

Approver = Callable[[str, dict[str, Any]], "bool | Awaitable[bool]"]
"""Asked before a tool outside trustedTools runs: (model-visible name, arguments) -> allow?"""


class ScopedApprover(ABC):
    """An approver told which stored step the asking turn works (a worker asking the
    task store's inbox names the plan and step); called plainly, it knows no step."""

    @abstractmethod
    async def ask(self, name: str, args: dict[str, Any], scope: StepScope | None) -> bool:
        """Whether the call `name(args)` of a turn working `scope` may run."""

    async def __call__(self, name: str, args: dict[str, Any]) -> bool:
        return await self.ask(name, args, None)


_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64  # the providers' limit on a function name


PLANNING_BUILTINS = frozenset({"reasoning", "subagent"})
"""Built-in servers that act only inside the agent's own planning: always trusted."""

BUILTIN_NAMESPACES = {"reasoning_": "reasoning", "subagent_": "subagent", "python_": "python"}
"""Tool-name prefixes of the built-in servers: a bare trustedTools pattern matching such a
name trusts it only on that built-in, never an MCP tool that merely has the name."""


def pattern_trusts(pattern: str, tool: str, server: str, builtin: str | None) -> bool:
    """Whether one trustedTools pattern covers `tool` of `server`.

    `server/tool` patterns name the server (`tasks/task_*`, `*/read_*`); a bare pattern
    matches tool names, except that a built-in's namespace (`reasoning_*`, ...) is
    matched on that built-in server only.
    """
    if "/" in pattern:
        server_pattern, tool_pattern = pattern.split("/", 1)
        return fnmatch.fnmatchcase(server, server_pattern) and fnmatch.fnmatchcase(
            tool, tool_pattern
        )
    if not fnmatch.fnmatchcase(tool, pattern):
        return False
    owner = next((s for prefix, s in BUILTIN_NAMESPACES.items() if tool.startswith(prefix)), None)
    return owner is None or owner == builtin


TASK_READS = frozenset({TASK_READ, TASK_LIST, TASK_EVENTS})
"""The convention's tools that change nothing: a step's turn may always call them."""
OWN_TASK_TOOLS = frozenset({TASK_UPDATE, TASK_CLAIM, TASK_HEARTBEAT, TASK_EDIT})
"""Tools a step's turn may call on its own task (status, notes, its claim, its text)."""


@dataclass(frozen=True)
class StepScope:
    """What a step's turn (a parallel run's sub-agent, a watch turn, a worker's) may change
    in the task store unasked: its own task, and new tasks or dependencies within its goal.

    The goal's tasks are the plan's steps as the run knows them, the goal and the step.
    `asker` names who works it for the kernel (a sub-agent, the watch): its approvals are
    asked in the store's inbox too; '' for the agent's own turn."""

    task: str
    goal: str
    plan: frozenset[str]
    asker: str = ""

    @classmethod
    def of(cls, step: StepRef | None, asker: str = "") -> StepScope | None:
        """The scope of a turn that works `step`; None for a turn that works no stored step."""
        if step is None or step.task_id is None or not step.goal_id:
            return None
        return cls(step.task_id, step.goal_id, frozenset(step.plan_ids), asker)

    def permits(self, tool: str, args: dict[str, Any]) -> bool:
        """Whether a task-server call stays within the step: a read, a change of its own task
        (not moving it out of its goal), a task created under its goal or step, or a
        dependency between two of its goal's tasks. Deletes and all else: no."""
        goal = {self.goal, self.task, *self.plan}
        if tool in TASK_READS:
            return True
        if tool in OWN_TASK_TOOLS:
            return args.get("id") == self.task and args.get("parent") in (None, "", self.goal)
        if tool == TASK_CREATE:
            return args.get("parent") in (self.goal, self.task)
        if tool == TASK_DEP:
            return args.get("id") in goal and args.get("blocker") in goal
        return False


class MaskedArgs(dict[str, Any]):
    """A call's arguments as the approver sees them when they hold secret-looking values:
    those values are *** here, and `secret_paths` says where they are (`config.api_key`)."""

    def __init__(self, args: dict[str, Any], secret_paths: tuple[str, ...]) -> None:
        super().__init__(args)
        self.secret_paths = secret_paths


@dataclass
class TrustGate:
    """Decides whether a tool may run without asking, and asks `approve` about the rest.

    Planning built-ins always run. A built-in server may advise (`advice`): ASK tools
    always ask; without `trustedTools`, DEFAULT tools (notebook tools, read-only python
    tools) and the wired task server's convention tools (the agent's own plan store) run
    too, except a step turn's call outside its StepScope and, while plans are held for
    review (`reviewing`), a raw `task_create`. With `trustedTools` the list is the whole
    truth for everything else. What is
    not trusted asks, and with no one to ask (`approve` is None) it is denied. A call
    whose arguments hold a secret-looking value (a key format, or one of `known_secrets`)
    asks even when trusted; the approver gets MaskedArgs, never the value.
    """

    trusted: tuple[str, ...] | None
    approve: Approver | None
    builtin_of: Callable[[str], str | None]  # a server's built-in name, None for MCP servers
    task_server: str | None = None
    on_error: Callable[[str], None] = lambda message: None
    advice: Callable[[str, str], Trust | None] = lambda server, tool: None  # built-ins' say
    known_secrets: Callable[[], Sequence[str]] = tuple  # the kernel's own keys
    reviewing: Callable[[], bool] = lambda: False  # plans are held for the user's review

    def trusts(
        self,
        tool: str,
        server: str,
        args: dict[str, Any] | None = None,
        scope: StepScope | None = None,
    ) -> bool:
        """Whether `tool` of `server`, called with `args` in a turn of `scope`, runs unasked."""
        builtin = self.builtin_of(server)
        if builtin in PLANNING_BUILTINS:
            return True
        advice = self.advice(server, tool) if builtin else None
        if advice is Trust.ASK:
            return False
        if self.trusted is None:
            if server == self.task_server and tool in TASK_TOOLS:
                return self._task_call_trusted(tool, args or {}, scope)
            return advice is Trust.DEFAULT
        return any(pattern_trusts(p, tool, server, builtin) for p in self.trusted)

    def _task_call_trusted(self, tool: str, args: dict[str, Any], scope: StepScope | None) -> bool:
        """The implicit trust of the task server: a plan filed past the review asks, and so
        does a step turn's call that reaches beyond its own task and goal."""
        if tool == TASK_CREATE and self.reviewing():
            return False
        return scope is None or scope.permits(tool, args)

    async def allows(
        self,
        name: str,
        tool: str,
        server: str,
        args: dict[str, Any],
        scope: StepScope | None = None,
    ) -> bool:
        known = tuple(self.known_secrets())
        paths = tuple(secret_paths(args, known))
        if not paths and self.trusts(tool, server, args, scope):
            return True
        if self.approve is None:
            return False
        redacted = mask_args(args, known)
        shown = MaskedArgs(redacted, paths) if paths else redacted
        try:
            answer: bool | Awaitable[bool]
            if isinstance(self.approve, ScopedApprover):  # told the step it works
                answer = await self.approve.ask(name, shown, scope)
            else:
                answer = self.approve(name, shown)
            if inspect.isawaitable(answer):
                answer = await answer
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.on_error(f"approval callback failed: {exc_summary(exc)}")
            return False
        return bool(answer)


@dataclass
class ToolRouter:
    """The tools offered to the model and where each one goes."""

    dispatcher: Dispatcher
    routes: dict[str, tuple[str, str]] = field(default_factory=dict)
    defs: list[ToolDef] = field(default_factory=list)
    alone: frozenset[str] = frozenset()  # model-visible names whose server says: run alone
    read_only: frozenset[str] = frozenset()  # model-visible names of tools that change nothing
    task_server: str = ""  # the wired task server: its task_* calls carry this agent's claims
    held: HeldClaims = field(default_factory=HeldClaims)  # the claims this agent made

    async def refresh(self) -> None:
        """Map model-visible tool names to (server, tool); later duplicates get a server prefix."""
        routes: dict[str, tuple[str, str]] = {}
        defs: list[ToolDef] = []
        alone: set[str] = set()
        read_only: set[str] = set()
        for info in await self.dispatcher.list_tools():
            name = _TOOL_NAME.sub("_", info.name)[:MAX_TOOL_NAME]
            if name in routes:
                name = _TOOL_NAME.sub("_", f"{info.server}__{info.name}")[:MAX_TOOL_NAME]
            if name in routes:
                continue
            routes[name] = (info.server, info.name)
            defs.append(ToolDef(name, info.description, info.input_schema))
            if info.sequential:
                alone.add(name)
            if info.read_only:
                read_only.add(name)
        self.routes, self.defs = routes, defs
        self.alone, self.read_only = frozenset(alone), frozenset(read_only)

    def server_of(self, name: str) -> str:
        route = self.routes.get(name)
        return route[0] if route else ""

    def by_server(self) -> dict[str, list[tuple[str, str]]]:
        """Each server's tools as (model-visible name, first sentence of the description)."""
        found: dict[str, list[tuple[str, str]]] = {}
        for tool in self.defs:
            server = self.routes[tool.name][0]
            found.setdefault(server, []).append((tool.name, first_sentence(tool.description)))
        return found

    def runs_alone(
        self, name: str, patterns: Sequence[str], builtin_of: Callable[[str], str | None]
    ) -> bool:
        """Whether a call of `name` must run with no other call beside it: its server says
        so, or a `sequentialTools` pattern (as trustedTools: `tool` or `server/tool`) names it."""
        if name in self.alone:
            return True
        route = self.routes.get(name)
        if route is None or not patterns:
            return False
        server, tool = route
        return any(pattern_trusts(p, tool, server, builtin_of(server)) for p in patterns)

    def refusal(self, call: ToolCall, args: Any, bad_json: str) -> ToolResult | None:
        """The answer to a call that cannot run as sent (no name, unknown, bad arguments)."""
        if not call.name:
            return ToolResult.error("the tool call has no name; call one of the offered tools")
        if call.name not in self.routes:
            known = ", ".join(sorted(self.routes))
            return ToolResult.error(f"unknown tool {call.name!r}; available tools: {known}")
        if bad_json:
            return ToolResult.error(
                f"arguments of {call.name} are not valid JSON ({bad_json}); send one JSON object"
            )
        if not isinstance(args, dict):
            return ToolResult.error(
                f"arguments of {call.name} must be a JSON object, got {type(args).__name__}"
            )
        return None

    async def approval(
        self, call: ToolCall, args: dict[str, Any], gate: TrustGate, scope: StepScope | None = None
    ) -> ToolResult | None:
        """None when the gate lets a well-formed call run, else the denial the model reads."""
        server, tool = self.routes[call.name]
        if await gate.allows(call.name, tool, server, args, scope):
            return None
        return ToolResult.error(
            f"{call.name} is not in trustedTools and was not approved; it did not run"
        )

    async def dispatch(self, call: ToolCall, args: dict[str, Any]) -> ToolResult:
        """Run a checked, approved call on its server."""
        server, tool = self.routes[call.name]
        if server != self.task_server or tool not in TASK_TOOLS:
            return await self.dispatcher.dispatch(server, tool, args)
        return await self._task_call(server, tool, args)

    async def _task_call(self, server: str, tool: str, args: dict[str, Any]) -> ToolResult:
        """A task-store call of the model: a task this agent holds is worked with its claim's
        token, which the model never sees (its `token:` lines are cut from the answer)."""
        sent = self.held.with_token(tool, args)
        result = await self.dispatcher.dispatch(server, tool, sent)
        self.held.answered(tool, sent, not result.is_error, result.text)
        return replace(result, text=without_tokens(result.text))


def parse_arguments(raw: str) -> tuple[Any, str]:
    """The decoded arguments (raw text when undecodable) and the JSON error, if any."""
    if not raw.strip():
        return {}, ""
    try:
        return json.loads(raw), ""
    except json.JSONDecodeError as exc:
        return raw, f"{exc.msg} at character {exc.pos}"
    except RecursionError:  # json.loads recurses per nesting level
        return raw, "nested too deeply"


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text[:120]


def tool_names(defs: Sequence[ToolDef]) -> list[str]:
    return [d.name for d in defs]


def child_router(parent: ToolRouter) -> ToolRouter:
    """The parent's tools without the `subagent` server's: children spawn no children."""
    routes = {k: v for k, v in parent.routes.items() if v[0] != "subagent"}
    defs = [d for d in parent.defs if d.name in routes]
    return ToolRouter(
        parent.dispatcher, routes, defs, task_server=parent.task_server, held=parent.held
    )
