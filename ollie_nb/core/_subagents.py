"""Sub-agents: child sessions of one agent that work prompts side by side on its loop.

A child has its own turn state (history, usage, ledger), prompt queue and TurnRunner;
its context is derived from the parent's: the same chat backend, config, live MCP
sessions (the env's one Dispatcher: no new processes) and trust gate with its
approval callback. Children get no `subagent`
tools (depth 1). `SubAgents` owns a parent's children: unique names, a limit on
how many run at once, waiting, interrupting and the completion notes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ollie_nb.core._budget import Ledger
from ollie_nb.core._context import AgentContext, Phase, TurnState
from ollie_nb.core._conversation import Conversation
from ollie_nb.core._events import Event, ToolCalled, TurnResult, TurnStarted
from ollie_nb.core._history import UsageTotals
from ollie_nb.core._turn import TurnRunner
from ollie_nb.errors import OllieUsageError
from ollie_nb.llm import Message
from ollie_nb.planning import StepProgress, StepRef

NOTE_LINES = 3  # the reply lines a completion note carries
MAX_NAME = 40
MAX_QUEUED = 16  # prompts waiting for one child; more is a flood, not a plan
MAX_TURN_STARTS = 64  # prompts (spawns and sends) one turn of the parent may hand out
ChildSink = Callable[[str, Event], None]
"""Gets every event of every child: (child name, event)."""
ParentContext = Callable[[], AgentContext]
"""The parent agent's context as it is now (its backend and tools may change between turns)."""


class SubagentError(OllieUsageError):
    """A bad sub-agent request (unknown or duplicate name, over the limit, empty prompt)."""


class ChildSession:
    """One sub-agent: its own turn state (history, usage, ledger) and a queue of prompts worked
    one turn each, with a context derived from its parent's at each turn."""

    def __init__(
        self, name: str, parent: ParentContext, usage: Conversation, sink: ChildSink, step: str = ""
    ) -> None:
        self.name = name
        self.step = step  # what it works, for displays (a plan step's title)
        self._parent = parent
        self._sink = sink
        self.session_id = f"{usage.session_id}/{name}"
        self.conversation = Conversation(self.session_id)
        ledger = parent().spend.subagent(name)  # its spend, under the session's cap
        self.state = TurnState(self.conversation, ledger, parent=usage)
        self.work: StepRef | None = None  # the plan step it was assigned: its turns' scope
        self.last_tool = ""  # the last tool its work called (since it was assigned)
        self.error = ""
        self.capped = False  # its last turn ended at a spend cap (before a model request)
        self.interrupted = False
        self.turns = 0
        self.started = time.monotonic()
        self._queue: deque[str] = deque()
        self._task: asyncio.Task[None] | None = None
        self._runner = TurnRunner(self.state)
        self.on_idle: Callable[[ChildSession], None] = lambda child: None

    @property
    def history(self) -> list[Message]:
        return self.conversation.history

    @property
    def ledger(self) -> Ledger:
        """The ledger its turns count in (its spend, under its plan's or the session's cap)."""
        return self.state.ledger

    def assign(self, step: str, within: Ledger, work: StepRef | None = None) -> None:
        """A new piece of work (a plan step): it starts from its prompt alone (an earlier
        step's turns are not sent again: a step's cost stays flat however many came before),
        its spend counts afresh, under `within`; its turns work `work` (what their task calls
        may change unasked)."""
        self.step, self.work, self.last_tool = step, work, ""
        self._parent().save_due()  # the last step's rounds reach the session file first
        self.conversation.history, self.conversation.errors = [], []
        self.state.ledger = self._parent().spend.subagent(self.name, within)

    @property
    def usage(self) -> UsageTotals:
        return self.conversation.usage

    @property
    def reply(self) -> str:
        return self.conversation.reply

    def context(self) -> AgentContext:
        """Its context now: the parent's, without sub-agent tools, with its own sink."""
        return self._parent().child(self.name, self._tell)

    def _tell(self, event: Event) -> None:
        """Pass its turn's event on, noting the tool it calls (its progress tells it)."""
        if isinstance(event, ToolCalled):
            self.last_tool = event.tool
        self._sink(self.name, event)

    @property
    def progress(self) -> StepProgress:
        """Its work so far, as a heartbeat tells the store: its ledger's spend, last tool."""
        return StepProgress(self.ledger.spend, self.last_tool)

    # -- work ------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def queued(self) -> int:
        return len(self._queue)

    def send(self, prompt: str) -> None:
        """Queue a prompt; the child starts working its queue if it was idle."""
        if len(self._queue) >= MAX_QUEUED:
            raise SubagentError(
                f"sub-agent {self.name} has {len(self._queue)} prompts waiting already (at most "
                f"{MAX_QUEUED}); wait for it with subagent_wait, then send more"
            )
        self._queue.append(prompt)
        if not self.busy:
            self.interrupted = False
            self._task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        try:
            while self._queue:
                result = await self._turn(self._queue.popleft())
                if result.interrupted:
                    self._queue.clear()
                    break
        finally:
            self.state.enter(Phase.IDLE)
            self.on_idle(self)

    async def _turn(self, prompt: str) -> TurnResult:
        self.turns += 1
        self.error = ""
        try:  # the parent's session counts every request (the gateway adds it there too)
            result = await self._runner.run(
                self.context(), TurnStarted(prompt, step=self.work, asker=self.name)
            )
        except Exception as exc:  # an internal error: the runner kept it; the parent is told
            result = TurnResult(error=f"internal error: {type(exc).__name__}")
        self.error = result.error
        self.capped = result.capped
        self.interrupted = self.interrupted or result.interrupted
        if result.reply:
            self.conversation.reply = result.reply
        return result

    def interrupt(self) -> bool:
        """Cancel the running turn and drop the queue; True if one was running."""
        self._queue.clear()
        if not self.busy:
            return False
        self._runner.interrupting = True
        self.interrupted = True  # also when the turn is cut before its loop (in a hook)
        assert self._task is not None
        self._task.cancel()
        return True

    async def until_idle(self) -> None:
        """Wait for the queue to be worked (or interrupted)."""
        if self._task is not None:
            await asyncio.gather(asyncio.shield(self._task), return_exceptions=True)

    @property
    def status(self) -> str:
        """idle, running (its state), failed or interrupted, in one word."""
        if self.busy:
            return "running"
        if self.interrupted:
            return "interrupted"
        return "failed" if self.error else ("done" if self.turns else "idle")


@dataclass(frozen=True)
class ChildInfo:
    """One line of `subagent_list` / `%ollie subagents`."""

    name: str
    status: str
    step: str
    turns: int
    reply: str


def first_lines(text: str, count: int = NOTE_LINES, width: int = 200) -> str:
    """The first `count` non-blank lines of a reply, each cut at `width` characters."""
    lines = [line.strip()[:width] for line in text.splitlines() if line.strip()]
    return " / ".join(lines[:count]) + (" ..." if len(lines) > count else "")


class SubAgents:
    """A parent's children: spawn, send, list, wait, interrupt; at most `limit` running at once."""

    def __init__(
        self,
        parent: ParentContext,
        usage: Conversation,
        limit: int,
        notify: Callable[[str], None],
        withdraw: Callable[[str], None] = lambda text: None,
    ) -> None:
        self._parent = parent  # the parent's context now
        self._usage = usage  # the parent's conversation: its usage counts the children's
        self.limit = limit
        self._notify = notify  # queues a note to the parent
        self._withdraw = withdraw  # takes a queued note back
        self._sent: dict[str, str] = {}  # child -> its completion note, while queued
        self.children: dict[str, ChildSession] = {}
        self.listeners: list[ChildSink] = []
        self._quiet: set[str] = set()  # children whose completion the parent is not told
        self.started_this_turn = 0  # prompts the model handed out in the parent's turn

    def new_turn(self) -> None:
        """The parent started a turn: its budget of MAX_TURN_STARTS prompts starts again."""
        self.started_this_turn = 0

    def charge(self) -> None:
        """Count one prompt the model hands out (spawn or send); over the turn's budget: refuse."""
        if self.started_this_turn >= MAX_TURN_STARTS:
            raise SubagentError(
                f"this turn has handed {MAX_TURN_STARTS} prompts to sub-agents already (the most "
                "one turn may); wait for them with subagent_wait and finish the turn"
            )
        self.started_this_turn += 1

    def _sink(self, name: str, event: Event) -> None:
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # a frontend's bug must not end a turn
                listener(name, event)

    @property
    def running(self) -> list[ChildSession]:
        return [c for c in self.children.values() if c.busy]

    def spawn(
        self,
        name: str,
        prompt: str,
        *,
        step: str = "",
        notify: bool = True,
        bypass_limit: bool = False,
    ) -> ChildSession:
        """Start a child on `prompt`; it runs on its own while this returns at once.

        `notify=False`: the parent is not told when it ends (a plan run settles its
        step); `bypass_limit`: the caller keeps its own count (a plan run's width).
        """
        name = name.strip()
        _check_name(name)
        _check_prompt(prompt)
        if name in self.children:
            raise SubagentError(f"a sub-agent named {name!r} exists already; use subagent_send")
        if not bypass_limit:
            self._check_room()
        child = ChildSession(name, self._parent, self._usage, self._sink, step)
        child.on_idle = self._finished
        if not notify:
            self._quiet.add(name)
        self.children[name] = child
        child.send(prompt)
        return child

    def send(self, name: str, prompt: str, *, bypass_limit: bool = False) -> ChildSession:
        """Queue another prompt to a child (it starts again if it was idle)."""
        _check_prompt(prompt)
        child = self.get(name)
        if not child.busy and not bypass_limit:
            self._check_room()
        child.send(prompt)
        return child

    def restore(
        self, saved: Iterable[Mapping[str, Any]], histories: Mapping[str, list[Message]]
    ) -> int:
        """Children of a saved session back, idle, with their histories; how many."""
        count = 0
        for data in saved:
            name = str(data.get("name", "")).strip()
            if not name or name in self.children:
                continue
            step = str(data.get("step", ""))
            child = ChildSession(name, self._parent, self._usage, self._sink, step)
            child.on_idle = self._finished
            child.conversation.history = histories.get(name, [])
            child.conversation.reply = str(data.get("reply", ""))
            child.turns = int(data.get("turns", 0))
            child.error = str(data.get("error", ""))
            self._quiet.add(name)  # its turn ended with the old kernel: no note now
            self.children[name] = child
            count += 1
        return count

    def saved(self) -> list[dict[str, Any]]:
        """Every child as session JSON data (its step, turns, last reply; not its history)."""
        return [
            {
                "name": c.name,
                "step": c.step,
                "status": c.status,
                "turns": c.turns,
                "reply": c.reply,
                "error": c.error,
            }
            for c in self.children.values()
        ]

    def histories(self) -> dict[str, list[Message]]:
        """Every child's history by name (a session file appends what each one added)."""
        return {c.name: c.history for c in self.children.values()}

    def retire(self, name: str) -> None:
        """Forget an idle quiet child (a former plan worker), so its name can be given again."""
        if self.reusable(name):
            self.children.pop(name, None)
            self._quiet.discard(name)

    def reusable(self, name: str) -> bool:
        """A name a plan run may give a worker: free, or an idle quiet child (a former worker)."""
        child = self.children.get(name)
        return child is None or (name in self._quiet and not child.busy)

    def get(self, name: str) -> ChildSession:
        child = self.children.get(name.strip())
        if child is None:
            known = ", ".join(self.children) or "none yet"
            raise SubagentError(f"no sub-agent named {name!r} (sub-agents: {known})")
        return child

    def _check_room(self) -> None:
        if len(self.running) >= self.limit:
            raise SubagentError(
                f"{self.limit} sub-agents are running already (maxParallel {self.limit}); "
                "wait for one with subagent_wait, then spawn"
            )

    def infos(self) -> list[ChildInfo]:
        return [
            ChildInfo(c.name, c.status, c.step, c.turns, first_lines(c.reply, 1))
            for c in self.children.values()
        ]

    async def wait(self, names: Iterable[str], timeout: float | None) -> list[ChildSession]:
        """Wait (at most `timeout` s) until the named children (all when none named) are idle."""
        wanted = [self.get(n) for n in names] or list(self.children.values())
        if not wanted:
            raise SubagentError("there are no sub-agents to wait for; spawn one first")
        waits = [asyncio.ensure_future(c.until_idle()) for c in wanted]
        _, pending = await asyncio.wait(waits, timeout=timeout)
        for task in pending:
            task.cancel()
        return wanted

    def interrupt_all(self) -> int:
        """Interrupt every running child; how many were running."""
        return sum(child.interrupt() for child in list(self.children.values()))

    async def aclose(self) -> None:
        self.interrupt_all()
        await asyncio.gather(*(c.until_idle() for c in self.children.values()))

    def _finished(self, child: ChildSession) -> None:
        if child.name in self._quiet:
            return
        if child.interrupted:
            note = f"sub-agent {child.name} was interrupted"
        elif child.error:
            note = f"sub-agent {child.name} failed: {first_lines(child.error)}"
        else:
            note = f"sub-agent {child.name} finished: {first_lines(child.reply)}"
        self._sent[child.name] = note
        self._notify(note)

    def reported(self, name: str) -> None:
        """The parent has read this child's outcome (subagent_wait): its queued note goes."""
        note = self._sent.pop(name, None)
        if note is not None:
            self._withdraw(note)


def _check_name(name: str) -> None:
    if not name:
        raise SubagentError("a sub-agent needs a name (letters, digits, - or _)")
    if len(name) > MAX_NAME or not all(ch.isalnum() or ch in "-_." for ch in name):
        raise SubagentError(
            f"bad sub-agent name {name[:MAX_NAME]!r}: use up to {MAX_NAME} letters, digits, - _ ."
        )


def _check_prompt(prompt: str) -> None:
    if not isinstance(prompt, str) or not prompt.strip():
        raise SubagentError("the prompt is empty; say what the sub-agent should do")


class SubagentTools:
    """The `subagent_*` tools' control (tools.SubagentControl) over a parent's SubAgents."""

    def __init__(self, agents: SubAgents) -> None:
        self.agents = agents

    def spawn(self, name: str, prompt: str) -> str:
        self.agents.charge()
        child = self.agents.spawn(name, prompt)
        return f"sub-agent {child.name} started; you will be told when it finishes"

    def send(self, name: str, prompt: str) -> str:
        self.agents.charge()
        child = self.agents.send(name, prompt)
        return f"queued to sub-agent {child.name} ({child.queued} waiting)"

    def list(self) -> str:
        infos = self.agents.infos()
        if not infos:
            return "no sub-agents yet"
        return "\n".join(
            f"{i.name}: {i.status}, {i.turns} turn(s)"
            + (f"; last reply: {i.reply}" if i.reply else "")
            for i in infos
        )

    async def wait(self, names: Iterable[str], timeout: float) -> str:
        children = await self.agents.wait(names, timeout)
        lines = []
        for child in children:
            if not child.busy:
                self.agents.reported(child.name)  # its reply is here: no second note
            if child.busy:
                lines.append(f"{child.name}: still {child.status} after {timeout:g} s")
            elif child.error:
                lines.append(f"{child.name}: failed: {first_lines(child.error)}")
            else:
                lines.append(f"{child.name}: {child.status}: {child.reply or '(no reply)'}")
        return "\n\n".join(lines)
