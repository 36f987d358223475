"""PlanRuns: an agent's parallel runs of its plans, one at a time (`AgentCore.run_plan`).

It picks where the plan's steps live (a task server through its TaskClient, or the
PlanBook's queue-plan states), drops the queue's own copies of a queue plan's steps
(its children work them), asks the claim lease the task server allows, and keeps
the run's task so `interrupt()` can stop it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from ollie_nb.core._budget import SpendBook
from ollie_nb.core._env import AgentEnv
from ollie_nb.core._events import EventSink
from ollie_nb.core._fanout import ParallelRun, PlanRun, QueueSteps, StepStore, TaskSteps
from ollie_nb.core._queue import PromptQueue
from ollie_nb.core._subagents import SubAgents
from ollie_nb.errors import AgentBusyError, NoTaskServerError
from ollie_nb.planning import PlanBook, PlanRecord, StepState


class PlanRunsHost(Protocol):
    """What a parallel run needs of the agent (AgentCore provides it)."""

    env: AgentEnv | None
    plan_book: PlanBook
    prompts: PromptQueue
    subagents: SubAgents
    spend: SpendBook

    def plan_statuses(self, record: PlanRecord) -> Awaitable[dict[str, StepState]]: ...


class PlanRuns:
    """The agent's parallel run under way (at most one)."""

    def __init__(self, host: PlanRunsHost, claim: Callable[[str], bool]) -> None:
        self.host = host
        self._claim = claim  # the watch: False while the agent works the step itself
        self._task: asyncio.Task[PlanRun] | None = None
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

    async def run(
        self, record: PlanRecord, width: int, owner: str, sink: EventSink, spread: bool = False
    ) -> PlanRun:
        """Work `record` with `width` children at once; see `AgentCore.run_plan`."""
        if self.running:
            raise AgentBusyError("a parallel run is under way; stop it first")
        store = await self._step_store(record)
        if record.kind == "queue":  # its children work the steps: the queue's copies go
            self.host.prompts.drop(
                lambda item: item.step is None or item.step.plan != record.number
            )
        ledger = self.host.spend.run(record.number)
        agents = self.host.subagents
        run = ParallelRun(
            record, store, agents, width, owner, sink, self._claim, spread=spread, ledger=ledger
        )
        self._task = asyncio.ensure_future(run.run())
        self.plan = record.number
        try:
            return await self._task
        finally:
            self._task = None
            self.plan = 0
            for step_id, spend in run.result.spend.items():  # for the graph and %ollie plans
                self.host.spend.record(record.number, step_id, spend)

    async def _step_store(self, record: PlanRecord) -> StepStore:
        env, book = self.host.env, self.host.plan_book
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
        read = lambda: self.host.plan_statuses(record)  # noqa: E731
        return TaskSteps(record, client, read, client.lease(env.config.claim_lease))
