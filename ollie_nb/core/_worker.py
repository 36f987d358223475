"""Headless workers: `python -m ollie_nb work --agent FILE` works the plans of a task store.

The command line is ollie_nb/work.py (above the core); the worker's logic is here.

A worker is an AgentCore without a notebook: it reads the goals of its agent's task
server (those marked approved for work, by one of the `--approved-by` users when named,
the ones `--plan` names, or with `--all` every one), and works each plan with ready steps
as a parallel run (`--parallel N` sub-agents at once, each step claimed with a lease and
renewed while its child works), each step's prompt carrying its goal and body as in a
notebook's parallel run. It logs one line per step. With `--until-idle` it exits once no
step is ready or held with a lease by another (a claim without end is not waited on): 0, or
EXIT_FAILED when a step failed; without it, it waits for the store's change signal (the
`tasks://events` resource subscription) and looks again, polling the event log every
WAIT_POLL s only on a server that offers no signal. SIGINT / SIGTERM stop the run: its children are
interrupted and their steps handed back (open again); so does a spend cap (BUDGETS.md),
after which the worker exits 1 (with `--ask` a reached cap first asks the store's inbox,
and a `raise:N` answer lets the run go on). Many workers, on many machines,
may share one store (PostgreSQL): the store's atomic claims decide who works a step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ollie_nb.core._core import AgentCore
from ollie_nb.core._event_reader import Updates
from ollie_nb.core._events import Event, ToolRefused, WatchNotice, WatchWhat
from ollie_nb.core._terminal import terminal_safe
from ollie_nb.core._worker_ask import InboxApprover
from ollie_nb.errors import OllieError
from ollie_nb.planning import (
    APPROVED_LABEL,
    EVENTS_URI,
    TASK_CLAIM,
    TASK_CREATE,
    TASK_LIST,
    TASK_UPDATE,
    PlanRecord,
    PlanStep,
    StepState,
    Task,
    TaskClient,
    format_plan,
)

LOGGED = {
    WatchWhat.CLAIMED,
    WatchWhat.DONE,
    WatchWhat.FAILED,
    WatchWhat.SKIPPED,
    WatchWhat.NOTE,
}
WAIT_POLL = 1.0  # s between reads of the event log while waiting, without a change signal
SIGNAL_CHECK = 30.0  # s: with a signal, the event log is read this often anyway
LEASE_MARGIN = 0.2  # s past a claim's lease end before the store is read again
LEASE_RECHECK = 1.0  # s between reads while a lease looks over but its claim stands (skew)
EXIT_FAILED = 1  # a step failed (a spend cap stops it with 1 too; signals: 130 / 143)
DEFAULT_ASK_TIMEOUT = 300.0  # s a call parked in the inbox waits for an answer
MAX_ARGS_SHOWN = 300  # characters of a refused call's arguments in its log line


class WorkerError(OllieError):
    """A worker cannot start: no task server in its agent, or the server cannot be read."""


@dataclass(frozen=True)
class WorkOptions:
    """What `work` was asked for (see ollie_nb.work.parser)."""

    agent: str
    plans: tuple[str, ...] = ()  # goal ids; none: the approved plans (or all, `every`)
    parallel: int = 1
    name: str = ""
    until_idle: bool = False
    every: bool = False  # `--all`: every plan in the store, approved or not
    approved_by: tuple[str, ...] = ()  # `--approved-by`: only marks these users set
    ask: bool = False  # `--ask`: a call that needs approval waits on the store's inbox
    ask_timeout: float = DEFAULT_ASK_TIMEOUT  # `--ask-timeout`: unanswered by then, denied
    answers_from: tuple[str, ...] = ()  # `--answers-from`: only these users' answers count

    def wants(self, goal: Task) -> bool:
        """Whether the worker works the plan of `goal`: named, approved (by one of
        `approved_by` when given), or all asked for."""
        if self.plans:
            return goal.id in self.plans
        if self.every or APPROVED_LABEL not in goal.labels:
            return self.every
        return not self.approved_by or goal.labels_by.get(APPROVED_LABEL) in self.approved_by

    @property
    def what(self) -> str:
        """What it works, for its first log line."""
        if self.plans:
            return "plan " + ", ".join(self.plans)
        if self.every:
            return "every plan"
        by = f" by {', '.join(self.approved_by)}" if self.approved_by else ""
        return f"the plans labelled {APPROVED_LABEL!r}{by}"


def plans_of(
    tasks: list[Task], wants: Callable[[Task], bool] = lambda goal: True
) -> list[PlanRecord]:
    """The store's goals that `wants` takes, with their steps, as plan records (from a
    listing of its tasks)."""
    children: dict[str, list[Task]] = {}
    for task in tasks:
        if task.parent:
            children.setdefault(task.parent, []).append(task)
    goals = [t for t in tasks if not t.parent and t.id in children]
    records = []
    for number, goal in enumerate(goals, 1):
        if not wants(goal):
            continue
        steps_raw = children[goal.id]
        ids = tuple(s.id for s in steps_raw)
        steps = tuple(
            PlanStep(s.title, s.body or "", tuple(ids.index(b) for b in s.blockers if b in ids))
            for s in steps_raw
        )
        text = format_plan(goal.title, steps, ids, "", goal.id)
        records.append(
            PlanRecord(
                number,
                goal.title,
                steps,
                ids,
                goal.id,
                backend="task server",
                text=text,
                kind="tasks",
            )
        )
    return records


class Worker:
    """One headless worker (see the module docstring)."""

    def __init__(self, core: AgentCore, options: WorkOptions, log: Callable[[str], None]) -> None:
        self.core, self.options, self._write = core, options, log
        self.stopping = ""  # the signal that stops the worker
        self.waits = ""  # how it last waited for a change: "signal" or "poll"
        self.capped = ""  # the spend cap that stopped it (a new run would only meet it again)
        self.lease_ends: list[float] = []  # when the claims it saw last run out (epoch s)
        self.held: list[Task] = []  # the steps of its plans others hold, as last listed
        self._told: set[tuple[str, str]] = set()  # (step, holder) pairs the log named
        self._stop = asyncio.Event()
        core.subagents.listeners.append(self._child_event)  # its steps' refused calls

    def _log(self, line: str) -> None:
        """Write one log line; its titles and notes are the store's text: escaped for a terminal."""
        self._write(terminal_safe(line))

    def stop(self, signame: str) -> None:
        """Stop working: the run's children are interrupted and their steps handed back."""
        if not self.stopping:
            self.stopping = signame
            self._stop.set()
            self.core.interrupt()

    @property
    def client(self) -> TaskClient:
        env = self.core.servers
        if env is None or env.task_client is None:
            failures = "; ".join(env.failures) if env is not None else ""
            raise WorkerError(
                f"the agent {self.options.agent!r} has no task server: "
                + (
                    failures
                    or f"a worker needs one (an MCP server with {TASK_CREATE}, {TASK_UPDATE}, "
                    f"{TASK_LIST} and {TASK_CLAIM})"
                )
            )
        return env.task_client

    async def plans(self) -> tuple[list[PlanRecord], dict[str, StepState], set[str]]:
        """The plans to work, every step's state and the ready steps' ids, from one listing
        of the store (ready: open, every blocker done, in the plan or not)."""
        tasks = await self._listing()
        states = {t.id: t.state for t in tasks}
        ready = {t.id for t in tasks if t.ready}
        self.lease_ends = lease_ends(tasks)
        records = plans_of(tasks, self.options.wants)
        ids = {i for r in records for i in r.ids}
        self.held = [t for t in tasks if t.id in ids and t.state.is_active]
        return records, states, ready

    def _look_within(self) -> float:
        """How long to wait for a signal: SIGNAL_CHECK, or until the first lease the store
        holds runs out (the store reopens a lapsed claim when it is next read; no signal
        comes of its own)."""
        if not self.lease_ends:
            return SIGNAL_CHECK
        left = min(self.lease_ends) - time.time() + LEASE_MARGIN
        return min(SIGNAL_CHECK, left if left > 0 else LEASE_RECHECK)

    async def _listing(self) -> list[Task]:
        """Every task of the store with the fields a plan record needs, bodies included
        (a server that gives no bodies in lists: each ready step's by task_read)."""
        try:
            tasks = await self.client.tasks()
        except OllieError as exc:
            raise WorkerError(str(exc)) from exc
        return [
            replace(t, body=await self.client.body(t.id))
            if t.body is None and t.parent and t.ready
            else t
            for t in tasks
        ]

    async def run(self) -> int:
        """Work until idle (`--until-idle`) or stopped; 0 when every run went through."""
        failed = False
        if self.options.approved_by and not self.client.caps.labels_by:
            raise WorkerError("the task store cannot tell who approved a plan (--approved-by)")
        if self.options.ask:
            self._ask_the_inbox()
        seen = await self._last_seq()
        while True:
            records, _, ready_ids = await self.plans()
            if self.options.plans and not records:
                named = ", ".join(self.options.plans)
                raise WorkerError(f"no plan with the goal id {named} in the store")
            ready = [r for r in records if any(i in ready_ids for i in r.ids)]
            worked = 0
            for record in ready:
                if self.stopping or self.capped:
                    break
                steps, broke = await self._work(record)
                worked, failed = worked + steps, failed or broke
            if self.capped:
                self._log(f"stopped: {self.capped}; its claimed steps were handed back")
                return EXIT_FAILED
            if self.stopping:
                self._log(f"stopped by {self.stopping}: claimed steps handed back")
                return 130 if self.stopping == "SIGINT" else 143
            leased = [t for t in self.held if t.leased]  # claims that end unless renewed
            if not ready and self.options.until_idle and not leased:
                self._log("idle: no step is ready or held with a lease" + _endless(self.held))
                return EXIT_FAILED if failed else 0
            if not worked:  # nothing to do, or every claim refused: wait for a change
                self._tell_holders()
                seen = await self._wait_change(seen)

    def _ask_the_inbox(self) -> None:
        """`--ask`: calls that need approval and requests at a reached spend cap wait on the
        store's inbox, when it has one."""
        if not self.client.caps.inbox:
            self._log(
                "--ask: the task store has no inbox (an ollie-tasks extension): calls that "
                "need approval are refused"
            )
            return
        asking = self.core.cap_ask
        asking.on, asking.log = True, self._log
        asking.timeout, asking.answers_from = self.options.ask_timeout, self.options.answers_from
        self.core.approve = InboxApprover(
            self.client,
            self.core.name,
            self.options.ask_timeout,
            self.options.answers_from,
            self._log,
        )

    def _tell_holders(self) -> None:
        """Log who holds the steps it waits on, once per step and holder."""
        for task in self.held:
            if (task.id, task.assignee) not in self._told:
                self._told.add((task.id, task.assignee))
                self._log(f"held: {holder_line(task)}")

    async def _work(self, record: PlanRecord) -> tuple[int, bool]:
        """One parallel run of `record`: how many steps it worked, and whether one failed."""
        self.core.plans.book.reset([record])
        run = self.core.runs.run_plan(
            self.options.parallel, record.number, self._notice, spread=True
        )
        try:
            result = await run
        except asyncio.CancelledError:
            cancelling = getattr(asyncio.current_task(), "cancelling", lambda: 0)  # 3.11+
            if not self.stopping or cancelling():
                raise
            return 0, False  # the stop interrupted the run (its steps were handed back)
        if result.capped or result.over_cap:  # another run would only spend up to it again
            self.capped = result.capped or f"a spend cap stopped {', '.join(result.over_cap)}"
        agents = self.core.subagents.children
        for name in [n for n, child in agents.items() if not child.busy]:
            del agents[name]  # a worker runs for days: finished children are not kept
        return len(result.workers), bool(result.failed)

    def _notice(self, event: Event) -> None:
        if isinstance(event, WatchNotice) and event.what in LOGGED:
            self._log(f"{event.what.value}: {event.text}")

    def _child_event(self, child: str, event: Event) -> None:
        """A step's call the trust gate refused (beyond its step, not trusted): one line."""
        if isinstance(event, ToolRefused):
            args = json.dumps(event.args, ensure_ascii=True, default=str)[:MAX_ARGS_SHOWN]
            self._log(f"refused: {child} called {event.tool} {args}: not approved, not run")

    async def _last_seq(self) -> int:
        """Where the event log stands: one read from its end (a server that cannot: the
        newest seq of its first page, as before)."""
        with contextlib.suppress(OllieError, ValueError):
            head = await self.client.head()
            if head is not None:
                return head
        events = await self._events(0)
        return max((e["seq"] for e in events), default=0)

    async def _events(self, since: int) -> list[dict[str, Any]]:
        try:
            return (await self.client.events(since, 1000)).events
        except (OllieError, ValueError):
            return []

    async def _wait_change(self, since: int) -> int:
        """Wait until the store's event log moves past `since`; the new last seq.

        Subscribed to the server's change signal while waiting: the log is read once
        subscribed (a change just before is not missed), then on each signal (and every
        SIGNAL_CHECK s). A server without the signal is polled every WAIT_POLL s.
        """
        updates = self._updates()
        if updates is not None:
            try:
                async with updates(EVENTS_URI) as signals:
                    if signals is not None:
                        self.waits = "signal"
                        return await self._wait_signalled(signals, since)
            except (OllieError, RuntimeError, OSError) as exc:  # the stream broke: poll
                self._log(f"change signal lost ({exc}); polling the event log")
        self.waits = "poll"
        return await self._wait_polled(since, WAIT_POLL)

    async def _renew_lease_ends(self) -> None:
        """A lease it waited for looks over: read where the claims stand now (a heartbeat
        may have renewed it; then it waits for the new end, not a second more often)."""
        if self.lease_ends and min(self.lease_ends) <= time.time():
            with contextlib.suppress(OllieError, ValueError):
                self.lease_ends = lease_ends(await self._listing())

    def _updates(self) -> Updates | None:
        env = self.core.servers
        server = env.dispatcher.get_server(env.task_server or "") if env is not None else None
        return getattr(server, "resource_updates", None)

    async def _wait_signalled(self, signals: AsyncIterator[Any], since: int) -> int:
        stream = aiter(signals)
        pending: asyncio.Future[Any] | None = None  # the next signal, awaited across looks
        try:
            while not self.stopping:
                events = await self._events(since)
                if events:
                    return max(int(e["seq"]) for e in events)
                if pending is None:
                    pending = asyncio.ensure_future(anext(stream))
                stop = asyncio.ensure_future(self._stop.wait())
                try:
                    await asyncio.wait(
                        {pending, stop}, timeout=self._look_within(), return_when="FIRST_COMPLETED"
                    )
                finally:
                    stop.cancel()
                if not pending.done():
                    await self._renew_lease_ends()
                if pending.done():
                    if pending.exception() is not None:
                        raise RuntimeError(f"the change signal ended: {pending.exception()!r}")
                    pending = None
            return since
        finally:
            if pending is not None and not pending.done():
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await pending

    async def _wait_polled(self, since: int, interval: float) -> int:
        while not self.stopping:
            events = await self._events(since)
            if events:
                return max(int(e["seq"]) for e in events)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), interval)
        return since


def lease_ends(tasks: list[Task]) -> list[float]:
    """The lease ends of the claims in a task listing, as epoch seconds."""
    ends = []
    for task in tasks:
        if task.lease_until:
            with contextlib.suppress(ValueError):
                stamp = task.lease_until.replace("Z", "+00:00")
                ends.append(datetime.fromisoformat(stamp).timestamp())
    return ends


def holder_line(task: Task) -> str:
    """Who holds a step, and until when: `t-1 (title) by bob, lease ends ...Z`."""
    who = task.assignee or "someone unnamed"
    until = f"lease ends {task.lease_until}" if task.lease_until else "no lease: not waited on"
    return f"{task.id} ({task.title}) by {who}, {until}"


def _endless(held: list[Task]) -> str:
    """The idle line's tail naming steps held without end (never waited on)."""
    endless = [t for t in held if not t.leased]
    if not endless:
        return ""
    return " (held without end, not waited on: " + "; ".join(map(holder_line, endless)) + ")"
