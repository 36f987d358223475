"""ParallelRuns: an agent's parallel runs of its plans, one at a time (`core.runs.run_plan`).

It picks where the plan's steps live (a task server through its TaskClient, or the
PlanBook's queue-plan states), drops the queue's own copies of a queue plan's steps
(its children work them), asks the claim lease the task server allows, and keeps
the run's task so `interrupt()` can stop it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ollie_nb.core._budget import BudgetExceededError, SpendBook
from ollie_nb.core._events import Event, EventSink, WatchWhat
from ollie_nb.core._parallel_run import (
    ParallelRun,
    ParallelRunResult,
    QueueSteps,
    StepStore,
    TaskSteps,
)
from ollie_nb.core._plans import Plans
from ollie_nb.core._queue import PromptQueue
from ollie_nb.core._subagents import SubAgents
from ollie_nb.core._tool_servers import ToolServers
from ollie_nb.errors import AgentBusyError, NoPlanError, NoTaskServerError
from ollie_nb.planning import PlanRecord


class ParallelRuns:
    """The agent's parallel run under way (at most one)."""

    def __init__(
        self,
        plans: Plans,
        prompts: PromptQueue,
        subagents: SubAgents,
        spend: SpendBook,
        env: Callable[[], ToolServers | None],
        claim: Callable[[str], bool],
        *,
        started: Callable[[], Awaitable[object]],
        owner: Callable[[], str],
        width: Callable[[], int],
        will_ask: Callable[[BudgetExceededError], bool] = lambda error: False,
    ) -> None:
        self._plans, self._prompts, self._subagents, self._spend = plans, prompts, subagents, spend
        self._env = env
        self._claim = claim  # the watch: False while the agent works the step itself
        self._started = started  # starts the agent when it has not started yet
        self._owner = owner  # who claims the steps: the agent's name and session
        self._width = width  # children at once when the caller names no number
        self._will_ask = will_ask  # a reached cap asks the inbox (its run goes on meanwhile)
        self._task: asyncio.Task[ParallelRunResult] | None = None
        self._run: ParallelRun | None = None  # the run under way, told what its work waits on
        self.plan = 0  # the number of the plan under way (0 when none): saved with the session

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def interrupt(self) -> bool:
        """Cancel the run under way; True if one ran."""
        if not self.running:
            return False
        assert self._task is not None
        self._task.cancel()
        return True

    def note(self, text: str) -> bool:
        """Say `text` where the run under way is read (its widget's log, a worker's log);
        False when no run is under way."""
        if self._run is None or not self.running:
            return False
        self._run.emit(WatchWhat.NOTE, text)
        return True

    async def run_plan(
        self,
        parallel: int | None = None,
        key: str | int | None = None,
        on_event: EventSink | None = None,
        *,
        spread: bool = False,
    ) -> ParallelRunResult:
        """Work a plan's steps in sub-agents, `parallel` at once (default maxParallel).

        Every ready step is claimed and handed to a child; newly ready steps follow
        until all are done or one fails. `core.interrupt()` stops it and every child.
        `spread`: take the ready steps in an order of this agent's own (for claimers
        that share the plan, such as headless workers), not in the plan's order.
        """
        await self._started()
        record = self._plans.find(key)
        if record is None:
            raise NoPlanError("there is no plan yet: ask for one first")
        if record.held:
            raise NoPlanError(
                f"plan {record.number} awaits your review: %ollie plan approve {record.number}"
            )
        width = parallel or self._width()
        result = await self.run(record, width, self._owner(), on_event or _ignore, spread)
        if result.failed or result.interrupted:
            self._prompts.note(result.summary)  # the agent reads it at its next turn
        return result

    async def run(
        self, record: PlanRecord, width: int, owner: str, sink: EventSink, spread: bool = False
    ) -> ParallelRunResult:
        """Work `record` with `width` children at once, claiming as `owner`; see `run_plan`."""
        if self.running:
            raise AgentBusyError("a parallel run is under way; stop it first")
        store = await self._step_store(record)
        if record.kind == "queue":  # its children work the steps: the queue's copies go
            self._prompts.drop(lambda item: item.step is None or item.step.plan != record.number)
        ledger = self._spend.run(record.number)
        agents = self._subagents
        run = ParallelRun(
            record,
            store,
            agents,
            width,
            owner,
            sink,
            self._claim,
            spread=spread,
            ledger=ledger,
            will_ask=self._will_ask,
        )
        self._task, self._run = asyncio.ensure_future(run.run()), run
        self.plan = record.number
        try:
            return await self._task
        finally:
            self._task, self._run = None, None
            self.plan = 0
            for step_id, spend in run.result.spend.items():  # for the graph and %ollie plans
                self._spend.record(record.number, step_id, spend)

    async def _step_store(self, record: PlanRecord) -> StepStore:
        env, book = self._env(), self._plans.book
        assert env is not None
        if record.kind == "queue":
            return QueueSteps(
                lambda: book.queue_states(record),
                lambda step_id, state: book.mark_queue_step(record.number, step_id, state),
            )
        if record.kind != "tasks" or env.task_server is None or env.task_client is None:
            raise NoTaskServerError(
                f"plan {record.number} is kept in the conversation only; "
                "a parallel run needs a task server or the queue fallback"
            )
        client = env.task_client
        read = lambda: self._plans.statuses(record)  # noqa: E731
        return TaskSteps(record, client, read, client.lease(env.config.claim_lease))


def _ignore(event: Event) -> None:
    return None
