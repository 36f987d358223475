"""AgentCore's plan methods: parallel runs, the task-event watch, the queue worked on demand."""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from ollie_nb.core._events import EventSink, TurnResult
from ollie_nb.core._fanout import ParallelRun, PlanRun, QueueSteps, StepStore, TaskSteps
from ollie_nb.core._turn import CONTINUE_PROMPT
from ollie_nb.core._watch import TaskEventWatcher
from ollie_nb.errors import AgentBusyError, NoPlanError, NoTaskServerError
from ollie_nb.planning import PlanRecord, read_step

log = logging.getLogger("ollie_nb.core")


class PlanMethods:
    """Plans that run (a part of AgentCore, which holds the state)."""

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
            raise NoPlanError("there is no plan yet: ask for one first")
        if self._plan_task is not None and not self._plan_task.done():
            raise AgentBusyError("a parallel run is under way; stop it first")
        store = self._step_store(record)
        if record.kind == "queue":  # its children work the steps: the queue's copies go
            kept = [p for p in self._queue if (s := read_step(p)) is None or s.kind != "queue"]
            self._queue = deque(kept)
        width = parallel or self.max_parallel or self.subagents.limit
        owner = f"{self.agent_name}@{self.session_id[-4:]}"
        sink = on_event or (lambda event: None)
        run = ParallelRun(record, store, self.subagents, width, owner, sink, self.watch.claim)
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
            raise NoTaskServerError(
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
