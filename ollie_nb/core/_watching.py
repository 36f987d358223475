"""AgentWatch: the agent's side of the watch: its watcher, its waker, the sink, the steps it took.

`AgentCore.start_watching` / `stop_watching` / `run_until_idle` hand their work to
this class, which reaches the agent only through the `WatchHost` protocol below.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ollie_nb.core._env import AgentEnv
from ollie_nb.core._events import (
    Event,
    EventSink,
    ToolCalled,
    ToolFinished,
    TurnResult,
    WatchNotice,
    WatchWhat,
)
from ollie_nb.core._react import Reactions, WatchHooks
from ollie_nb.core._wake import Waker
from ollie_nb.core._watch import TaskEventWatcher
from ollie_nb.errors import NotStartedError
from ollie_nb.planning import (
    TASK_UPDATE,
    Origin,
    PlanRecord,
    QueuedPrompt,
    StepRef,
    StepState,
)

log = logging.getLogger("ollie_nb.core")


class WatchHost(Protocol):
    """What the watch needs of the agent (AgentCore provides it)."""

    env: AgentEnv | None

    @property
    def plans(self) -> list[PlanRecord]: ...
    @property
    def agent_name(self) -> str: ...
    @property
    def is_running(self) -> bool: ...
    @property
    def queue_items(self) -> list[QueuedPrompt]: ...
    async def plan_statuses(self, record: PlanRecord) -> dict[str, StepState]: ...
    def queue(self, prompt: str | QueuedPrompt) -> int: ...
    def pop_queue(self) -> QueuedPrompt | None: ...
    def clear_queue(self) -> int: ...
    def drop_queued(self, origin: Origin) -> int: ...
    def note(self, text: str) -> None: ...
    def interrupt(self) -> bool: ...
    async def submit(
        self, prompt: str | QueuedPrompt, on_event: EventSink | None = None
    ) -> TurnResult: ...


@dataclass(frozen=True)
class Hold:
    """A watch turn's claim of its step: the heartbeat renewing it, or why it was refused."""

    beat: asyncio.Future[None] | None = None
    refused: str = ""


class AgentWatch:
    """Watches the task server for one agent and, with `wake`, has it work what gets queued."""

    def __init__(self, host: WatchHost) -> None:
        self.host = host
        self.watcher: TaskEventWatcher | None = None
        self.waker: Waker | None = None
        self.sink: EventSink = _ignore
        self.worked: set[str] = set()  # task ids of the steps the agent (or its children) took
        self.run_steps: set[str] = set()  # task ids parallel runs have claimed (or are claiming)
        self.current = ""  # the task id of the step the agent took last
        self._updates: dict[str, Any] = {}  # call id -> args of the agent's task_update calls
        self._ending: asyncio.Future[None] | None = None

    def took(self, step: StepRef | None) -> None:
        """Remember a task step as taken by the agent, so the watch never queues it again."""
        self.current = step.task_id if step is not None and step.task_id is not None else ""
        if self.current:
            self.worked.add(self.current)

    def claim(self, step_id: str) -> bool:
        """A parallel run would claim this step: False while the agent works it itself; else
        the step is the run's: the watch no longer queues it, and a queued copy goes."""
        if self.host.is_running and step_id == self.current:
            return False
        self.run_steps.add(step_id)
        queued = self.host.queue_items
        kept = [item for item in queued if item.step is None or item.step.task_id != step_id]
        if len(kept) < len(queued):
            self.host.clear_queue()
            for item in kept:
                self.host.queue(item)
        return True

    async def admit(self, item: QueuedPrompt, lost: Callable[[str], None]) -> Hold:
        """Claim a step the watch queued before the agent works it, with a lease renewed
        while its turn runs where the server has leases (`lost(why)` if it is lost). The
        hold says why not when another agent, kernel or a parallel run took it first (the
        agent does not work it); any other item holds nothing."""
        step, env = item.step, self.host.env
        if item.origin is not Origin.WATCH or step is None or step.task_id is None:
            return Hold()
        if env is None or env.task_client is None:
            return Hold()
        client, assignee = env.task_client, self.host.agent_name
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
        beat = asyncio.ensure_future(client.keep(step.task_id, assignee, lease, lost))
        return Hold(beat=beat)

    def refused(self, step: StepRef, why: str) -> None:
        """Another worker holds a step the watch queued: never queued again, and not the
        agent's current step."""
        self.current = ""
        text = f"{step.label}: not worked here, another worker holds it ({why})"
        self.emit(WatchNotice(text, WatchWhat.SKIPPED, step_id=step.task_id or ""))

    async def release(self, item: QueuedPrompt) -> None:
        """A claimed watch step after its turn: open again when the turn left it in progress
        (stopped, failed, or ended without marking it done); done or failed, it stays."""
        step, env = item.step, self.host.env
        if item.origin is not Origin.WATCH or step is None or step.task_id is None:
            return
        if env is None or env.task_client is None:
            return
        note = f"{self.host.agent_name}'s turn on it did not finish"
        released = await env.task_client.release(step.task_id, note)
        if released.refused:  # the claim is someone else's now: theirs to settle
            text = (
                f"{step.label}: left as it is, the server refused its release: {released.refused}"
            )
            self.emit(WatchNotice(text, WatchWhat.NOTE, step_id=step.task_id))

    async def start(
        self, interval: float, on_event: EventSink | None, wake: bool
    ) -> TaskEventWatcher:
        """See `AgentCore.start_watching`."""
        await self.stop()
        host = self.host
        if host.env is None:
            raise NotStartedError("the agent has not started: await core.start() first")
        self.sink = on_event or _ignore
        hooks = WatchHooks(
            plans=lambda: host.plans,
            enqueue=self._enqueue,
            queued=lambda: host.queue_items,
            worked=lambda: self.worked | self.run_steps,
            statuses=host.plan_statuses,
            note=host.note,
            emit=self.emit,
        )
        watcher = TaskEventWatcher.for_env(host.env, Reactions(hooks, host.agent_name), interval)
        if wake:
            self.waker = Waker(self._wake_turn, self._ended)
        self.watcher = watcher
        await watcher.start()
        return watcher

    async def stop(self) -> int:
        """Stop the watch; a turn the agent started itself is interrupted, and the steps the
        watch queued leave the queue (a new watch queues what is still ready). How many went."""
        waker, self.waker = self.waker, None
        watcher = self.watcher
        if watcher is not None:
            await watcher.stop()
        if waker is not None:
            if waker.working:
                self.host.interrupt()
            await waker.stop()
        dropped = self.host.drop_queued(Origin.WATCH) if watcher is not None else 0
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
        self.host.queue(item)
        self.kick()

    def emit(self, notice: WatchNotice) -> None:
        """A watch notice to the sink; a failing sink is logged, never raised."""
        try:
            self.sink(notice)
        except Exception:
            log.exception("watch sink failed on %s", notice.what.value)

    async def _wake_turn(self) -> TurnResult | None:
        """The waker's turn: the queue, worked when the agent is idle."""
        host = self.host
        if host.is_running or not host.queue_items:
            return None
        prompt = host.pop_queue()
        return None if prompt is None else await host.submit(prompt, self.sink)

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
            not self.host.is_running
            and not self.host.queue_items
            and (waker is None or waker.idle)
            and (watcher is None or not watcher.reading)
        )

    async def until_idle(self, timeout: float | None) -> None:
        """See `AgentCore.run_until_idle`."""

        async def settled() -> None:
            while True:
                if self.idle() and self.watcher is not None:
                    await self.watcher.safe_poll()  # what was signalled but not read yet
                if self.idle():
                    return
                await asyncio.sleep(0.01)

        await asyncio.wait_for(settled(), timeout)

    def observe(self, event: Event) -> None:
        """Tell the watcher of the agent's own successful task_update on its task server."""
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


def _ignore(event: Event) -> None:
    return None
