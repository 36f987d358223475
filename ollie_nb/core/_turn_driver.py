"""TurnDriver: works a prompt as a turn, then drains the agent's queue one turn each.

It owns the running turn's task and its TurnRunner, and the hold of a step the
task-event watch queued (claimed before its turn, released after, stopped when the
claim is lost). The agent hands it the parts it needs; it holds no reference back.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from ollie_nb.core._budget import Ledger, Scope, SpendBook
from ollie_nb.core._context import AgentContext, TurnState
from ollie_nb.core._events import Event, Notice, PlanProgress, TurnResult, TurnStarted
from ollie_nb.core._plans import Plans
from ollie_nb.core._queue import PromptQueue
from ollie_nb.core._tracing import tracing
from ollie_nb.core._turn import TurnRunner
from ollie_nb.core._watch import AgentWatch
from ollie_nb.planning import Origin, QueuedPrompt, StepRef, StepState, state_label
from ollie_nb.planning.prompts import CONTINUE_PROMPT

WATCH_ASKER = "watch"  # who asks for a watch step's turn, after the kernel's agent name


class TurnDriver:
    """The agent's turns: the running one's task, and the queue drained after it."""

    def __init__(
        self,
        turn: TurnState,
        prompts: PromptQueue,
        plans: Plans,
        watch: AgentWatch,
        spend: SpendBook,
        context: Callable[[], AgentContext],
        agent_name: Callable[[], str],
        save: Callable[[], None],
    ) -> None:
        self.turn, self.prompts, self.plans, self.watch, self.spend = (
            turn,
            prompts,
            plans,
            watch,
            spend,
        )
        self._context, self._agent_name, self._save = context, agent_name, save
        self.runner = TurnRunner(turn)
        self.task: asyncio.Task[TurnResult] | None = None
        self.step_limited = False  # the last turn stopped at maxSteps

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def cancel(self) -> bool:
        """Stop the running turn only (not a shutdown); True if one ran."""
        if self.task is None or self.task.done():
            return False
        self.runner.interrupting = True
        self.task.cancel()
        return True

    async def work(self, item: QueuedPrompt) -> TurnResult:
        """Work `item` as a turn, then the queue one turn each, as one task."""
        self.runner.interrupting = False
        self.task = asyncio.ensure_future(self._drain(item))
        try:
            result = await self.task
        finally:
            self.task = None
        self.step_limited = result.step_limit
        return result

    def inject(self, prompt: str) -> None:
        """Tell the running turn something: appended to the next tool result, else the next prompt."""
        if self.running:
            self.prompts.inject(prompt)
        else:
            self.prompts.put_first(QueuedPrompt(prompt, Origin.INJECTED))

    async def next_prompt(self) -> QueuedPrompt | None:
        """What `%ollie run` works next: the queue's first item (after the watcher's news),
        else the continuation of a turn stopped at maxSteps; None when there is nothing."""
        await self.watch.catch_up()
        item = self.prompts.pop()
        if item is None and self.step_limited:
            item = QueuedPrompt(CONTINUE_PROMPT, Origin.CONTINUE)
        return item

    async def _drain(self, item: QueuedPrompt) -> TurnResult:
        result = await self._work(item)
        done = 0
        while not result.interrupted and (self.prompts or await self._steps_became_ready()):
            if result.capped or (result.error and self.watch.waker is not None):
                break  # a cap is reached, or the watch reports the failure and ends: the queue stays
            done += 1
            nxt = self.prompts.pop()
            assert nxt is not None
            result = await self._work(nxt, done, done + len(self.prompts))
        self._save()
        return result

    async def _work(self, item: QueuedPrompt, position: int = 0, total: int = 0) -> TurnResult:
        """One item as a turn; the step it works is known from it (a queue plan's is marked,
        and goes back to the front of the queue when a cap or Stop ends its turn)."""
        step = item.step
        marked = step if step is not None and step.kind == "queue" else None
        if marked is not None and (unready := self._unready(marked)):
            return unready
        self.watch.took(step)  # before the claim's round trip: the watch queues it no more
        lost: list[str] = []  # why the claim of the item's step was lost, once it is
        context = self._context()
        held = await self.watch.admit(item, self._claim_lost(item, lost, context.emit))
        if held.refused:
            return TurnResult(blocked=held.refused)  # another worker holds it: not worked here
        if marked is not None:
            self.plans.book.mark(marked, StepState.IN_PROGRESS)
            self._progress(marked, context.emit)
        else:
            self._told(self.watch.started(item), context.emit)
        prompt = self.prompts.with_notes(item.text)
        asker = WATCH_ASKER if item.origin is Origin.WATCH else ""  # its approvals: the inbox too
        start = TurnStarted(prompt, position > 0, position, total, step, asker)
        if step is not None:  # its spend is the step's, within its plan's cap
            self.turn.ledger = Ledger(Scope.STEP, parent=self.spend.plan(step.plan))
        try:
            result = await self._traced(item, self.runner.run(self._context(), start))
        finally:
            if step is not None:
                self.spend.record(step.plan, step.step_id, self.turn.ledger.spend)
            self.turn.ledger = self.spend.session
            if held.beat is not None:
                held.beat.cancel()
            if not lost:  # a lost claim is the new holder's: never released over it
                with contextlib.suppress(Exception):  # the lease ends a claim left anyway
                    await self.watch.release(item)  # a watch step goes back unless closed
        if marked is not None:
            self._settle(item, marked, result)
            self._progress(marked, context.emit)
        else:
            self._told(await self.watch.ended(item), context.emit)
        return result

    def _progress(self, step: StepRef, emit: Callable[[Event], None]) -> None:
        """Tell how far the step's queue plan is (a header's bar shows it)."""
        record = self.plans.book.get(step.plan)
        if record is not None:
            states = self.plans.book.queue_states(record)
            done = sum(state is StepState.DONE for state in states.values())
            emit(PlanProgress(step.plan, done, len(record.steps), states))

    def _told(self, progress: PlanProgress | None, emit: Callable[[Event], None]) -> None:
        """Tell how far a watched task-server plan is, as `_progress` does for a queue plan."""
        if progress is not None:
            emit(progress)

    def _unready(self, step: StepRef) -> TurnResult | None:
        """A queue step whose blockers did not all finish is not worked (the user is told)."""
        waits = self.plans.book.waits_for(step)
        if not waits:
            return None
        which = ", ".join(f"{b} ({state_label(s)})" for b, s in waits.items())
        text = f"step {step.number} ({step.step_id}) is not worked: it waits for {which}"
        self._context().emit(Notice(text, "warning"))
        return TurnResult(blocked=text)

    def _settle(self, item: QueuedPrompt, step: StepRef, result: TurnResult) -> None:
        """A queue step's state after its turn: stopped by a cap or Stop, it stays open, first
        in the queue (`%ollie run` works it next); else failed or done."""
        if result.interrupted or result.capped:
            self.plans.book.mark(step, StepState.OPEN)
            self.prompts.put_first(item)
            return
        self.plans.book.mark(step, StepState.FAILED if result.error else StepState.DONE)

    def _traced(self, item: QueuedPrompt, work: Awaitable[TurnResult]) -> Awaitable[TurnResult]:
        """A step's turn inside the step's span; a step the watch queued is a trace of its own."""
        step, traced = item.step, tracing()
        if step is None or not traced.enabled:
            return work
        record = next((r for r in self.plans if r.number == step.plan), None)
        goal_id = record.goal_id if record is not None else ""
        watch = item.origin is Origin.WATCH
        return traced.step(step, goal_id, self._agent_name(), watch, work)

    def _claim_lost(
        self, item: QueuedPrompt, lost: list[str], emit: Callable[[Event], None]
    ) -> Callable[[str], None]:
        """A lost claim of the item's step: the user is told, and the turn working it stops
        (another holds the step now; `lost` keeps why, so the turn's end leaves it be)."""
        step = item.step
        which = f"step {step.number} ({step.step_id})" if step is not None else "the step"

        def stop(why: str) -> None:
            lost.append(why)
            emit(Notice(f"the claim of {which} was lost: {why}", "warning"))
            self.cancel()  # this turn only stops: not a shutdown

        return stop

    async def _steps_became_ready(self) -> bool:
        """With a watcher on, read task events before the queue is called empty."""
        await self.watch.catch_up()
        return bool(self.prompts)
