"""Working a plan in parallel: each ready step is claimed and handed to a sub-agent.

`ParallelRun` keeps up to `width` workers busy: it reads the plan's step statuses,
claims every ready step (atomically with a task server's `task_claim`), hands it to
a free worker (sub-agents `worker1` .. `workerN`, made as needed, each reused for the
next step once free), and when a worker ends settles its step and looks again. A
failure stops new starts; the workers at work finish. Cancelling the run interrupts
its workers and returns their unfinished steps to open (a step already done stays done);
so does a spend cap of the run or of the session, once reached (core/_budget.py). A
worker stopped by its own sub-agent cap hands its step back, and the others go on.
On a task server with leases each claim is renewed while its worker works (TaskClient.keep),
and a step another claimer held is tried again once it is open again (its claimer's lease
ran out).

The plan's states are not read again after every step: with atomic claims a late view
is safe (a claim of a step someone took meanwhile is refused), so the view read last,
with what this run's children settled since, stands in for up to REFRESH s while it
shows a step to start; it is read afresh when it shows none (or claims are not atomic).
Runs that share a plan with other claimers (headless workers) take its ready steps in
an order of their own (`spread`), so that they seldom race for the same step, and end when
only other claimers' steps are at work: the worker waits for those (or not, for a claim
without end) on the store's change signal and their leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ollie_nb.core._budget import BudgetExceededError, Ledger, Scope
from ollie_nb.core._events import EventSink, WatchNotice, WatchWhat
from ollie_nb.core._subagents import ChildSession, SubAgents, first_lines
from ollie_nb.core._tracing import tracing
from ollie_nb.planning import (
    NO_LEASE,
    TASK_CLAIM,
    TASK_UPDATE,
    Claim,
    ClaimOutcome,
    LeasePolicy,
    NextClaim,
    Origin,
    PlanRecord,
    Spend,
    StepProgress,
    StepRef,
    StepState,
    TaskClient,
    state_label,
    step_item,
)

POLL = 0.1  # s between status reads while only other agents' steps are in progress
REFRESH = 1.0  # s a late view of the plan's states stands in while it shows steps to start
RELEASE_WAIT = 1.5  # s a cancelled run waits for its children to hand their steps back
NEXT_CHOICES = 100  # ready steps offered to one claim-next (ollie-tasks takes at most 500)
BLOCKERS_REPORTED = "The steps it waits for reported:"

States = dict[str, StepState]


class StepStore(Protocol):
    """Where a plan's steps live: their states, claiming one, settling one."""

    note: str  # said once at the start (e.g. that claims are not atomic)
    atomic: bool  # a claim is refused for a step that is not open (a late view is safe)
    claims_next: bool  # `claim_next` picks and claims a step in one call

    async def statuses(self) -> States: ...
    async def claim(self, step_id: str, assignee: str) -> Claim: ...
    async def claim_next(self, step_ids: Sequence[str], assignee: str) -> NextClaim: ...
    async def keep(
        self,
        step_id: str,
        assignee: str,
        lost: Callable[[str], None],
        progress: Callable[[], StepProgress],
    ) -> None: ...
    async def settle(self, step_id: str, child: ChildSession) -> StepState: ...  # its new state
    async def hand_back(self, step_id: str) -> StepState: ...  # a claim no worker got: open


class TaskSteps:
    """Steps on a task server: claimed with task_claim (or task_update without it)."""

    def __init__(
        self,
        record: PlanRecord,
        client: TaskClient,
        read: Callable[[], Awaitable[States]],
        lease: LeasePolicy = NO_LEASE,
    ) -> None:
        self._client, self._read, self.atomic = client, read, client.caps.claims
        self.claims_next = client.caps.claim_next
        self.lease, self._goal = lease, record.goal_id
        self.note = (
            ""
            if self.atomic
            else (
                f"the task server has no {TASK_CLAIM}: steps are taken with {TASK_UPDATE}, "
                "so claims are not atomic (another agent may take the same step)"
            )
        )

    async def statuses(self) -> States:
        return await self._read()

    async def claim(self, step_id: str, assignee: str) -> Claim:
        return await self._client.claim(step_id, assignee, self.lease)

    async def claim_next(self, step_ids: Sequence[str], assignee: str) -> NextClaim:
        """The first of `step_ids` still ready, claimed by the server in one call."""
        goals = (self._goal,) if self._goal else ()
        return await self._client.claim_next(goals, assignee, self.lease, ids=step_ids)

    async def keep(
        self,
        step_id: str,
        assignee: str,
        lost: Callable[[str], None],
        progress: Callable[[], StepProgress],
    ) -> None:
        """Renew the claim while the step is worked (until cancelled), each heartbeat
        telling the step's `progress()` where the server keeps it."""
        await self._client.keep(step_id, assignee, self.lease, lost, progress)

    async def settle(self, step_id: str, child: ChildSession) -> StepState:
        """Closed in the store (the child marked it): as it is; else interrupted: open again;
        failed: failed; finished without marking it: failed."""
        # the state the child's own update left (the server said ok), else read this step
        ended = self._client.held.ended(step_id)
        state = ended if ended is not None else await self._client.status(step_id)
        if state.is_closed:  # done before a stop came: never reopened
            return state
        if child.interrupted:
            return await self._set(step_id, StepState.OPEN, f"{child.name} was interrupted")
        if child.capped:
            why = f"{child.name} stopped at a spend cap: {child.error}"
            return await self._set(step_id, StepState.OPEN, why)
        if child.error:
            why = f"{child.name}: {first_lines(child.error)}"
            return await self._set(step_id, StepState.FAILED, why)
        why = f"{child.name} finished without marking the step done: {first_lines(child.reply)}"
        return await self._set(step_id, StepState.FAILED, why)

    async def hand_back(self, step_id: str) -> StepState:
        return await self._set(step_id, StepState.OPEN, "the run stopped before working it")

    async def _set(self, step_id: str, state: StepState, note: str) -> StepState:
        return await self._client.set_state(step_id, state, note)


class QueueSteps:
    """Steps of a queue plan (no task server): their states live in the agent's PlanBook."""

    note = ""
    atomic = True
    claims_next = False  # the agent's own book: a claim by id is as cheap

    def __init__(
        self, states: Callable[[], States], mark: Callable[[str, StepState], None]
    ) -> None:
        self._states, self._mark = states, mark

    async def statuses(self) -> States:
        return self._states()

    async def claim(self, step_id: str, assignee: str) -> Claim:
        if not self._states().get(step_id, StepState.UNKNOWN).is_open:
            return Claim(ClaimOutcome.REFUSED, f"{step_id} is not open")
        self._mark(step_id, StepState.IN_PROGRESS)
        return Claim(ClaimOutcome.CLAIMED)

    async def claim_next(self, step_ids: Sequence[str], assignee: str) -> NextClaim:
        states = self._states()
        first = next((i for i in step_ids if states.get(i, StepState.UNKNOWN).is_open), "")
        if not first:
            return NextClaim("", Claim(ClaimOutcome.REFUSED, "no step is open"))
        return NextClaim(first, await self.claim(first, assignee))

    async def keep(
        self,
        step_id: str,
        assignee: str,
        lost: Callable[[str], None],
        progress: Callable[[], StepProgress],
    ) -> None:
        await asyncio.Event().wait()  # the agent's own book: nothing to renew

    async def settle(self, step_id: str, child: ChildSession) -> StepState:
        state = (
            StepState.OPEN
            if child.interrupted or child.capped
            else StepState.FAILED
            if child.error
            else StepState.DONE
        )
        self._mark(step_id, state)
        return state

    async def hand_back(self, step_id: str) -> StepState:
        self._mark(step_id, StepState.OPEN)
        return StepState.OPEN


@dataclass
class ParallelRunResult:
    """How a parallel run ended: each worked step's worker and final status, and every
    step's state in the store when the run ended (`states`: also the steps others did)."""

    plan: int
    workers: dict[str, str] = field(default_factory=dict)  # step id -> worker name
    outcome: dict[str, StepState] = field(default_factory=dict)  # step id -> state after it
    failed: list[str] = field(default_factory=list)
    interrupted: bool = False
    note: str = ""
    states: dict[str, StepState] = field(default_factory=dict)  # step id -> state at the end
    spend: dict[str, Spend] = field(default_factory=dict)  # step id -> what its worker used
    capped: str = ""  # the cap that stopped the run (the line the user reads), if one did
    cap_spent: bool = False  # the run's own cap stopped it: its line gives the run's spend
    over_cap: list[str] = field(default_factory=list)  # steps whose worker a cap stopped

    @property
    def total(self) -> Spend:
        """What the run's workers used, all steps together."""
        return Spend.total(self.spend.values())

    @property
    def summary(self) -> str:
        done = sum(1 for s in self.outcome.values() if s is StepState.DONE)
        steps = "step" if done == 1 else "steps"
        text = f"plan {self.plan}: {done} {steps} done by sub-agents"
        if self.failed:
            text += f"; failed: {', '.join(self.failed)}"
        if self.over_cap:
            text += f"; handed back at a spend cap: {', '.join(self.over_cap)}"
        if self.capped:
            text += f"; stopped: {self.capped}"
        return text + ("; interrupted" if self.interrupted else "")

    @property
    def headline(self) -> str:
        """The summary with what the run used, said once (its own cap's line says it already)."""
        if not self.spend or self.cap_spent:
            return self.summary
        return f"{self.summary} ({self.total})"

    def table(self, record: PlanRecord) -> str:
        """One line per step worked: number, id, worker, status, tokens and cost."""
        lines = []
        for index, step_id in enumerate(record.ids):
            if step_id not in self.workers:
                continue
            state = self.states.get(step_id, self.outcome.get(step_id, StepState.UNKNOWN))
            spend = self.spend.get(step_id, Spend())
            lines.append(
                f"step {index + 1} ({step_id}) {state_label(state)} by "
                f"{self.workers[step_id]}: {spend}"
            )
        return "\n".join([self.summary, *lines])


class ParallelRun:
    """One parallel run of one plan (see the module docstring)."""

    def __init__(
        self,
        record: PlanRecord,
        store: StepStore,
        agents: SubAgents,
        width: int,
        owner: str,
        sink: EventSink,
        on_claim: Callable[[str], bool] = lambda step_id: True,
        spread: bool = False,
        ledger: Ledger | None = None,
        will_ask: Callable[[BudgetExceededError], bool] = lambda error: False,
    ) -> None:
        self.record, self.store, self.agents = record, store, agents
        self._will_ask = will_ask  # a reached cap pauses and asks (at the next request)
        self.ledger = ledger or Ledger(Scope.PLAN, name=str(record.number))  # the run's spend
        self.width, self.owner, self._sink = max(1, width), owner, sink
        self.result = ParallelRunResult(record.number, note=store.note)
        self._inflight: dict[asyncio.Task[StepState], str] = {}
        self._pool: list[str] = []  # this run's workers, in the order they were made
        self._claiming: dict[str, asyncio.Future[Claim]] = {}  # claims a Stop came during
        self._claiming_next: list[asyncio.Future[NextClaim]] = []  # the same, by claim-next
        self._reports: dict[str, str] = {}  # step id -> its worker's reply, in brief
        self._skip: dict[str, bool] = {}  # steps another agent took first -> seen held since
        self._lost: set[str] = set()  # steps whose claim ran out while a child worked them
        self._agent_works: set[str] = set()  # steps the parent agent works itself this round
        self._on_claim = on_claim  # the watch: False for a step the agent works itself
        self._view: States | None = None  # the plan's states as last read
        self._read_at = 0.0  # when (time.monotonic())
        self._mine: States = {}  # steps this run's children settled since that read
        self._order = random.Random(owner) if spread else None  # ready steps taken in its order
        self._late = False  # the states of this round are the late view, not a fresh read
        self._stale = False  # a claim by the late view was refused: read afresh next

    def emit(self, what: WatchWhat, text: str, step_id: str = "", child: str = "") -> None:
        statuses = dict(self.result.outcome) if what is WatchWhat.FINISHED else {}
        notice = WatchNotice(text, what, self.record, step_id, child, statuses)
        with contextlib.suppress(Exception):  # a frontend's bug must not stop the run
            self._sink(notice)

    async def run(self) -> ParallelRunResult:
        """Work the plan until every step is finished, one failed, or nothing can start."""
        return await tracing().plan_run(self.record, self.width, self._work_plan())

    async def _work_plan(self) -> ParallelRunResult:
        if self.store.note:
            self.emit(WatchWhat.NOTE, self.store.note)
        try:
            while await self._round():
                pass
        except asyncio.CancelledError:
            await self._release()
            self.result.interrupted = True
            await self._read_states()
            self.emit(WatchWhat.STOPPED, f"parallel run of plan {self.record.number} stopped")
            return self.result
        await self._read_states()
        self.emit(WatchWhat.FINISHED, self.result.summary)
        return self.result

    async def _statuses(self, fresh: bool = False) -> States:
        """The plan's states: the late view (see the module docstring), or read afresh
        when `fresh`, when claims are not atomic, or when the view is REFRESH s old."""
        now = time.monotonic()
        view = self._view
        late = view is not None and self.store.atomic and not fresh and not self._stale
        self._late = late and now - self._read_at < REFRESH
        if view is None or not self._late:
            view = self._view = await self.store.statuses()
            self._read_at = now
            self._mine.clear()
            self._stale = False
        return {**view, **self._mine}

    async def _current(self) -> States:
        """The states to start steps by: the late view while it shows a step for every
        free worker (or for some, with children at work), else a fresh read."""
        statuses = await self._statuses()
        free = self.width - len(self._inflight)
        if self.result.failed or free <= 0:
            return statuses
        ready = sum(1 for _ in itertools.islice(self._ready(statuses), free))  # up to free
        if ready >= free or (ready and self._inflight):
            return statuses
        return await self._statuses(fresh=True)

    async def _read_states(self) -> None:
        """Every step's state from the store (what its workers, the agent or others did)."""
        try:
            self.result.states = dict(await self.store.statuses())
        except Exception:  # an unreadable store: what this run's workers settled
            self.result.states = dict(self.result.outcome)

    async def _round(self) -> bool:
        """Start what is ready, then wait for a child (or poll); False when the run is over."""
        if await self._over_budget():
            return False
        statuses = await self._current()
        self._agent_works.clear()
        self._retry_reopened(statuses)
        skipped = len(self._skip)
        if not self.result.failed:
            await self._start_ready(statuses)
        if not self._inflight:
            states = [statuses.get(i, StepState.UNKNOWN) for i in self.record.ids]
            if self.result.failed or all(s.is_finished for s in states):
                return False
            # a claim refused just now: someone took the step since `statuses` was read
            taken_now = len(self._skip) > skipped
            if taken_now and self._late:
                return True  # the late view misled: read afresh at once, no pause
            # a shared plan's run (spread: a worker) leaves others' claims to its worker,
            # which waits on the store's signal and on their leases, not on POLL
            others = self._order is None and any(s.is_active for s in states)
            active = self._agent_works or taken_now or others
            if not active and next(self._ready(statuses), None) is None:
                return False  # nothing runs and nothing can: blocked by a failed step
            await asyncio.sleep(POLL)  # another agent works a step this plan waits for
            self._stale = True  # what they did since: read afresh
            return True
        done, _ = await asyncio.wait(self._inflight, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            step_id = self._inflight.pop(task)
            self._settled(step_id, task.result())
        return True

    async def _over_budget(self) -> bool:
        """The run's cap or the session's is reached: no step starts, and the steps at
        work are handed back, as on Stop (a sub-agent's own cap stops that one only). With
        asking on, the run goes on: its next request at the cap asks, and waits."""
        error = self.ledger.exceeded()
        if error is None or self._will_ask(error):
            return False
        self.result.capped = str(error).removesuffix("; the model request was not sent")
        self.result.cap_spent = error.scope is Scope.PLAN  # the run's ledger: its spend
        await self._release()
        self._inflight.clear()
        self.emit(WatchWhat.STOPPED, f"plan {self.record.number}: {self.result.capped}")
        return True

    def _retry_reopened(self, statuses: States) -> None:
        """A step another claimer held and that is open again (its lease ran out, or it
        was handed back) is tried again; one refused while open is not (no busy loop)."""
        for step_id, seen_held in list(self._skip.items()):
            state = statuses.get(step_id, StepState.UNKNOWN)
            if not state.is_open:
                self._skip[step_id] = True
            elif seen_held:
                del self._skip[step_id]

    def _ready(self, statuses: States) -> Iterator[int]:
        """Open steps not taken whose blockers are done and, if this run worked them, settled
        (a step waits for its blockers' workers to end, so its prompt carries their reports),
        in this run's order: read as far as the caller needs (in the plan's order), or all
        of them shuffled (a spread run's own order)."""
        working = set(self._inflight.values())
        taken = {*working, *self.result.workers, *self._skip}
        ids, unknown = self.record.ids, StepState.UNKNOWN

        def unblocked(j: int) -> bool:
            return statuses.get(ids[j], unknown).unblocks and ids[j] not in working

        ready = (
            i
            for i, step_id in enumerate(ids)
            if step_id not in taken
            and statuses.get(step_id, unknown).is_open
            and all(unblocked(j) for j in self.record.steps[i].after)
        )
        if self._order is None:
            return ready
        spread = list(ready)
        self._order.shuffle(spread)
        return iter(spread)

    async def _start_ready(self, statuses: States) -> None:
        if self.store.claims_next:
            await self._start_next(statuses)
            return
        for index in self._ready(statuses):
            if len(self._inflight) >= self.width or self._stale:
                return
            await self._start(index)

    async def _start_next(self, statuses: States) -> None:
        """Each free worker's step picked and claimed by the store in one call, the first
        of the ready steps (in this run's order) that is still ready: never refused. The
        ready steps are looked at as far as the offer needs (not all, at every step)."""
        ready = (i for i in self._ready(statuses) if self._mine_to_claim(i))
        offered = list(itertools.islice(ready, NEXT_CHOICES))
        while offered and len(self._inflight) < self.width:
            ids = [self.record.ids[i] for i in offered]
            claim = asyncio.ensure_future(self.store.claim_next(ids, self.owner))
            try:  # a Stop during the claim's round trip: the claim lands, and is handed back
                got = await asyncio.shield(claim)
            except asyncio.CancelledError:
                self._claiming_next.append(claim)
                raise
            if got.claim.note:  # said once (the server needs leases)
                self.emit(WatchWhat.NOTE, got.claim.note, got.task_id)
            if not got.claim.taken or got.task_id not in ids:
                for index in offered:  # all taken by others since the view was read
                    self._refused(index, got.claim.reason)
                return
            index = self.record.ids.index(got.task_id)
            offered.remove(index)
            offered.extend(itertools.islice(ready, 1))  # the offer stays NEXT_CHOICES long
            self._begin(index, self.owner)

    def _mine_to_claim(self, index: int) -> bool:
        """Whether the run may claim step `index`: not while the agent works it itself."""
        step_id = self.record.ids[index]
        if self._on_claim(step_id):
            return True
        self._agent_works.add(step_id)  # looked at again next round
        return False

    def _refused(self, index: int, reason: str) -> None:
        """A claim of step `index` refused: tried again once another's claim of it ends."""
        step_id = self.record.ids[index]
        self._skip[step_id] = False
        self._stale = self._late  # others took steps the late view shows open
        text = f"step {index + 1} ({step_id}) not claimed: {reason}"
        self.emit(WatchWhat.SKIPPED, text, step_id)

    async def _start(self, index: int) -> None:
        step_id = self.record.ids[index]
        if not self._mine_to_claim(index):
            return
        # by step, not by child: a step a stopped run handed back keeps its assignee (a
        # task server may not clear one), and this agent's next run claims it again
        assignee = f"{self.owner}/step{index + 1}"
        claim = asyncio.ensure_future(self.store.claim(step_id, assignee))
        try:  # a Stop during the claim's round trip: the claim lands, and is handed back
            claimed = await asyncio.shield(claim)
        except asyncio.CancelledError:
            self._claiming[step_id] = claim
            raise
        if claimed.note:  # said once (the server needs leases)
            self.emit(WatchWhat.NOTE, claimed.note, step_id)
        if not claimed.taken:
            self._refused(index, claimed.reason)
            return
        self._begin(index, assignee)

    def _begin(self, index: int, assignee: str) -> None:
        """Hand step `index`, claimed for `assignee`, to a worker, its claim kept meanwhile."""
        step_id = self.record.ids[index]
        note = self._reported(index)
        item = step_item(self.record, index, Origin.PLAN, goal=self.record.goal, note=note)
        assert item.step is not None
        span = tracing().step_span(item.step, self.record.goal_id, assignee, detached=False)
        with span.current():  # the child's turns nest under the step's span
            child = self._hand(item.text, item.step)
        self.result.workers[step_id] = child.name
        text = f"step {index + 1} ({step_id}) -> {child.name}"
        self.emit(WatchWhat.CLAIMED, text, step_id, child.name)
        work = span.settle(
            self._work(step_id, assignee, child), lambda: first_lines(child.error, 1)
        )
        self._inflight[asyncio.ensure_future(work)] = step_id

    def _reported(self, index: int) -> str:
        """What the workers of the step's blockers reported in this run, for its prompt."""
        ids = self.record.ids
        lines = [
            f"- {ids[j]} ({self.record.steps[j].title}): {self._reports[ids[j]]}"
            for j in self.record.steps[index].after
            if ids[j] in self._reports
        ]
        return "\n".join([BLOCKERS_REPORTED, *lines]) if lines else ""

    def _hand(self, prompt: str, step: StepRef) -> ChildSession:
        """A free worker of this run gets the step; else a new one (at most `width` busy)."""
        busy = {self.result.workers[s] for s in self._inflight.values()}
        children, title = self.agents.children, step.title
        free = next((n for n in self._pool if n not in busy and not children[n].busy), None)
        if free is not None:
            children[free].assign(title, self.ledger, step)
            return self.agents.send(free, prompt, bypass_limit=True)
        name = self._new_worker()
        self.agents.retire(name)  # a former run's worker: made afresh, with today's tools
        child = self.agents.spawn(name, prompt, step=title, notify=False, bypass_limit=True)
        child.assign(title, self.ledger, step)  # before its first request: the loop has not run it
        return child

    def _new_worker(self) -> str:
        """The first `workerN` name not in use: new, or that of an idle former worker."""
        n = 1
        while (name := f"worker{n}") in self._pool or not self.agents.reusable(name):
            n += 1
        self._pool.append(name)
        return name

    async def _work(self, step_id: str, assignee: str, child: ChildSession) -> StepState:
        """The child works the step while its claim is renewed; then the step is settled."""

        def lost(why: str) -> None:  # another claimer may hold it now: the child stops
            self._lost.add(step_id)
            which = f"step {self.record.ids.index(step_id) + 1} ({step_id})"
            self.emit(WatchWhat.NOTE, f"the claim of {which} was lost: {why}", step_id)
            child.interrupt()

        progress = lambda: child.progress  # noqa: E731 (read at each heartbeat)
        beat = asyncio.ensure_future(self.store.keep(step_id, assignee, lost, progress))
        try:
            await child.until_idle()
        finally:
            beat.cancel()
            self.result.spend[step_id] = child.ledger.spend
        if not child.error and not child.interrupted:  # what its dependents' prompts carry
            self._reports[step_id] = first_lines(child.reply)
        if step_id in self._lost:  # not ours to settle any more
            return (await self.store.statuses()).get(step_id, StepState.UNKNOWN)
        return await self.store.settle(step_id, child)

    def _settled(self, step_id: str, state: StepState) -> None:
        self.result.outcome[step_id] = self._mine[step_id] = state
        index = self.record.ids.index(step_id)
        name = self.result.workers[step_id]
        child = self.agents.children.get(name)
        if child is not None and child.capped and not state.is_finished:
            self.result.over_cap.append(step_id)  # handed back; the other workers go on
        elif not state.is_finished and step_id not in self._lost:
            self.result.failed.append(step_id)
        status = state_label(state)
        text = f"step {index + 1} ({step_id}) {status} by {name}"
        if child is not None and child.capped:  # said where the user reads the run, not only kept
            text += f"; {name} stopped: {first_lines(child.error, 1)}"
        self.emit(WatchWhat.of_status(status), text, step_id, name)

    async def _release(self) -> None:
        """Interrupt the run's children and let them hand their steps back (bounded)."""
        for step_id in self._inflight.values():
            child = self.agents.children.get(self.result.workers[step_id])
            if child is not None:
                child.interrupt()
        if self._inflight:
            done, _ = await asyncio.wait(self._inflight, timeout=RELEASE_WAIT)
            for task in done:
                if not task.cancelled() and task.exception() is None:
                    self.result.outcome[self._inflight[task]] = task.result()
        for step_id, claim in self._claiming.items():  # claimed, never handed to a worker
            with contextlib.suppress(Exception):  # a claim that timed out or failed
                if (await asyncio.wait_for(claim, RELEASE_WAIT)).taken:
                    self.result.outcome[step_id] = await self.store.hand_back(step_id)
        for picked in self._claiming_next:
            with contextlib.suppress(Exception):
                got = await asyncio.wait_for(picked, RELEASE_WAIT)
                if got.claim.taken:
                    self.result.outcome[got.task_id] = await self.store.hand_back(got.task_id)
