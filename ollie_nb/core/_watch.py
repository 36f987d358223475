"""AgentWatch: the agent's side of the watch: its watcher, its waker, the sink, the steps it took.

`core.watch` is this class: start, stop, until_idle, catch_up. It is handed the agent's
prompt queue and plans, and its turn controls (running, interrupt, submit) as functions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ollie_nb.core._event_reader import TaskEventWatcher
from ollie_nb.core._events import (
    Event,
    EventSink,
    PlanProgress,
    ToolCalled,
    ToolFinished,
    TurnResult,
    WatchNotice,
    WatchWhat,
)
from ollie_nb.core._plans import Plans
from ollie_nb.core._queue import PromptQueue
from ollie_nb.core._react import Reactions, WatchHooks
from ollie_nb.core._tool_servers import ToolServers
from ollie_nb.core._wake import Waker
from ollie_nb.errors import NotStartedError
from ollie_nb.planning import (
    TASK_UPDATE,
    Origin,
    PlanRecord,
    QueuedPrompt,
    Spend,
    StepProgress,
    StepRef,
    StepState,
)

log = logging.getLogger("ollie_nb.core")


Submit = Callable[[QueuedPrompt, EventSink], Awaitable[TurnResult]]
"""Run a queued item as the agent's turn, its events to the sink."""


@dataclass(frozen=True)
class Hold:
    """A watch turn's claim of its step: the heartbeat renewing it, or why it was refused."""

    beat: asyncio.Future[None] | None = None
    refused: str = ""


class AgentWatch:
    """Watches the task server for one agent and, with `wake`, has it work what gets queued."""

    def __init__(
        self,
        prompts: PromptQueue,
        plans: Plans,
        env: Callable[[], ToolServers | None],
        name: Callable[[], str],
        *,
        running: Callable[[], bool],
        interrupt: Callable[[], bool],
        submit: Submit,
        spent: Callable[[], Spend] = Spend,
    ) -> None:
        self._prompts, self._plans, self._env, self._name = prompts, plans, env, name
        self._spent = spent  # what the agent's session has spent so far
        self.last_tool = ""  # the last tool the agent called: a held step's heartbeats tell it
        self._running, self._interrupt, self._submit = running, interrupt, submit
        self.watcher: TaskEventWatcher[Reactions] | None = None
        self.waker: Waker | None = None
        self.sink: EventSink = _ignore
        self.worked: set[str] = set()  # task ids of the steps the agent (or its children) took
        self.run_steps: set[str] = set()  # task ids parallel runs have claimed (or are claiming)
        self.current = ""  # the task id of the step the agent took last
        self._updates: dict[str, Any] = {}  # call id -> args of the agent's task_update calls
        self._ending: asyncio.Future[None] | None = None
        self._read: dict[int, dict[str, StepState]] = {}  # plan -> step states read after a step

    def took(self, step: StepRef | None) -> None:
        """Remember a task step as taken by the agent, so the watch never queues it again."""
        self.current = step.task_id if step is not None and step.task_id is not None else ""
        if self.current:
            self.worked.add(self.current)

    def reopened(self, step_id: str) -> None:
        """A step retried (reopened on the store): the watch may queue it again."""
        self.worked.discard(step_id)
        self.run_steps.discard(step_id)

    def claim(self, step_id: str) -> bool:
        """A parallel run would claim this step: False while the agent works it itself; else
        the step is the run's: the watch no longer queues it, and a queued copy goes."""
        if self._running() and step_id == self.current:
            return False
        self.run_steps.add(step_id)
        queued = self._prompts.items
        kept = [item for item in queued if item.step is None or item.step.task_id != step_id]
        if len(kept) < len(queued):
            self._prompts.clear()
            for item in kept:
                self._prompts.put(item)
        return True

    async def admit(self, item: QueuedPrompt, lost: Callable[[str], None]) -> Hold:
        """Claim a step the watch queued before the agent works it, with a lease renewed
        while its turn runs where the server has leases (`lost(why)` if it is lost). The
        hold says why not when another agent, kernel or a parallel run took it first (the
        agent does not work it); any other item holds nothing."""
        step, env = item.step, self._env()
        if item.origin is not Origin.WATCH or step is None or step.task_id is None:
            return Hold()
        if env is None or env.task_client is None:
            return Hold()
        client, assignee = env.task_client, self._name()
        lease = client.lease(env.config.claim_lease)
        claim = await client.claim(step.task_id, assignee, lease)
        if claim.note:
            self.emit(WatchNotice(claim.note, WatchWhat.NOTE, step_id=step.task_id))
        if not claim.taken:
            why = claim.reason or claim.outcome.value
            self.refused(step, why)
            return Hold(refused=why)
        if not claim.renewal.active:
            return Hold()
        beat = asyncio.ensure_future(
            client.keep(step.task_id, assignee, lease, lost, self._progress_since())
        )
        return Hold(beat=beat)

    def _progress_since(self) -> Callable[[], StepProgress]:
        """What the agent's turns spent from now on and the last tool they called, for the
        heartbeats of the step it claimed now (the board shows them)."""
        start, self.last_tool = self._spent(), ""
        return lambda: StepProgress(self._spent() - start, self.last_tool)

    def refused(self, step: StepRef, why: str) -> None:
        """Another worker holds a step the watch queued: never queued again, and not the
        agent's current step."""
        self.current = ""
        text = f"{step.label}: not worked here, another worker holds it ({why})"
        self.emit(WatchNotice(text, WatchWhat.SKIPPED, step_id=step.task_id or ""))

    def started(self, item: QueuedPrompt) -> PlanProgress | None:
        """How far the task-server plan of a step the watch queued is as its turn starts: the
        states last read, the step claimed. No round trip, so a Stop finds the turn itself."""
        record, watcher = self._tasks_plan(item), self.watcher
        if record is None or item.step is None:
            return None
        known = self._read.get(record.number)
        if known is None:
            known = watcher.reactions.known(record) if watcher is not None else {}
        return _progress(record, {**known, item.step.step_id: StepState.IN_PROGRESS})

    async def ended(self, item: QueuedPrompt) -> PlanProgress | None:
        """How far that plan is once the step's turn ended, read from the task server."""
        record = self._tasks_plan(item)
        if record is None:
            return None
        try:
            states = await self._plans.statuses(record)
        except Exception as exc:  # the bar waits for the next step; the turn's result stands
            log.warning("plan %d's step states could not be read: %s", record.number, exc)
            return None
        self._read[record.number] = states
        return _progress(record, states)

    def _tasks_plan(self, item: QueuedPrompt) -> PlanRecord | None:
        """The task-server plan of a step the watch queued; None for any other item."""
        if item.origin is not Origin.WATCH or item.step is None:
            return None
        record = self._plans.find(item.step.plan)
        return record if record is not None and record.kind == "tasks" else None

    async def release(self, item: QueuedPrompt) -> None:
        """A claimed watch step after its turn: open again when the turn left it in progress
        (stopped, failed, or ended without marking it done); done or failed, it stays."""
        step, env = item.step, self._env()
        if item.origin is not Origin.WATCH or step is None or step.task_id is None:
            return
        if env is None or env.task_client is None:
            return
        ended = env.task_client.held.ended(step.task_id)  # the turn's own settling update
        if ended is not None and ended.is_closed:
            return  # the server said ok to closing it: nothing to release, nothing to read
        note = f"{self._name()}'s turn on it did not finish"
        released = await env.task_client.release(step.task_id, note)
        if released.refused:  # the claim is someone else's now: theirs to settle
            text = (
                f"{step.label}: left as it is, the server refused its release: {released.refused}"
            )
            self.emit(WatchNotice(text, WatchWhat.NOTE, step_id=step.task_id))

    async def start(
        self, interval: float = 2.0, *, on_event: EventSink | None = None, wake: bool = True
    ) -> TaskEventWatcher[Reactions]:
        """Watch the task server: ready and assigned steps are queued (and worked, with `wake`).

        The ready steps of our plans are queued at once (a restart finds them again);
        then each change signal (or poll, every `interval` s, without one) is read.
        `on_event` gets the watch's events and the turns the agent starts itself.
        """
        await self.stop()
        env = self._env()
        if env is None:
            raise NotStartedError("the agent has not started: await core.start() first")
        self.sink = on_event or _ignore
        hooks = WatchHooks(
            plans=lambda: list(self._plans),
            enqueue=self._enqueue,
            queued=lambda: self._prompts.items,
            worked=lambda: self.worked | self.run_steps,
            statuses=self._plans.statuses,
            note=self._prompts.note,
            emit=self.emit,
            reopened=self.reopened,
        )
        watcher = TaskEventWatcher.for_env(env, Reactions(hooks, self._name()), interval)
        if wake:
            self.waker = Waker(self._wake_turn, self._ended)
        self.watcher = watcher
        await watcher.start()
        return watcher

    async def stop(self) -> int:
        """Stop the watch; a turn the agent started itself is interrupted, and the steps the
        watch queued leave the queue (a new watch queues what is still ready). How many left."""
        waker, self.waker = self.waker, None
        watcher = self.watcher
        if watcher is not None:
            await watcher.stop()
        if waker is not None:
            if waker.working:
                self._interrupt()
            await waker.stop()
        dropped = self._prompts.drop(_not_watched) if watcher is not None else 0
        if dropped:
            steps = "step" if dropped == 1 else "steps"
            text = f"the watch is off: {dropped} {steps} it had queued left the queue"
            self.emit(WatchNotice(text, WatchWhat.NOTE))
        if self.watcher is watcher:  # not a watch started again meanwhile
            self.watcher = None
        return dropped

    def kick(self) -> None:
        """A turn ended or a prompt was queued: let the waker look."""
        if self.waker is not None:
            self.waker.kick()

    def _enqueue(self, item: QueuedPrompt) -> None:
        self._prompts.put(item)
        self.kick()

    def emit(self, notice: WatchNotice) -> None:
        """A watch notice to the sink; a failing sink is logged, never raised."""
        try:
            self.sink(notice)
        except Exception:
            log.exception("watch sink failed on %s", notice.what.value)

    async def _wake_turn(self) -> TurnResult | None:
        """The waker's turn: the queue, worked when the agent is idle."""
        if self._running() or not self._prompts.items:
            return None
        prompt = self._prompts.pop()
        return None if prompt is None else await self._submit(prompt, self.sink)

    def _ended(self, reason: str) -> None:
        text = f"{reason}; the watch is off (turn it on again to go on)"
        self.emit(WatchNotice(text, WatchWhat.STOPPED))
        waker = self.waker

        async def end() -> None:
            if self.waker is waker:  # not a watch started again since
                await self.stop()

        self._ending = asyncio.ensure_future(end())

    def idle(self) -> bool:
        """Nothing queued, running, about to run, or being read."""
        waker, watcher = self.waker, self.watcher
        return (
            not self._running()
            and not self._prompts.items
            and (waker is None or waker.idle)
            and (watcher is None or not watcher.reading)
        )

    async def until_idle(self, timeout: float | None = None) -> None:
        """Wait until nothing is queued or running and the watch has read every event."""

        async def settled() -> None:
            while True:
                if self.idle() and self.watcher is not None:
                    await self.watcher.safe_poll()  # what was signalled but not read yet
                if self.idle():
                    return
                await asyncio.sleep(0.01)

        await asyncio.wait_for(settled(), timeout)

    async def catch_up(self) -> None:
        """With a watcher on, be current: read the events (or let a read under way finish)."""
        if self.watcher is None or not self.watcher.running:
            return
        await self.watcher.catch_up()

    def observe(self, event: Event) -> None:
        """Tell the watcher of the agent's own successful task_update on its task server;
        keep the name of the last tool called."""
        if isinstance(event, ToolCalled):
            self.last_tool = event.tool
        watcher = self.watcher
        if watcher is None:
            return
        if isinstance(event, ToolCalled) and event.tool == TASK_UPDATE:
            self._updates[event.id] = event.args
        elif isinstance(event, ToolFinished) and event.tool == TASK_UPDATE:
            args = self._updates.pop(event.id, None)
            if not event.is_error and isinstance(args, dict) and event.server == watcher.server:
                task_id = str(args.get("id", "")).strip().lower()
                watcher.own_update(task_id, str(args.get("status", "")).strip().lower())


def _progress(record: PlanRecord, states: dict[str, StepState]) -> PlanProgress:
    done = sum(state is StepState.DONE for state in states.values())
    return PlanProgress(record.number, done, len(record.steps), states)


def _ignore(event: Event) -> None:
    return None


def _not_watched(item: QueuedPrompt) -> bool:
    return item.origin is not Origin.WATCH
