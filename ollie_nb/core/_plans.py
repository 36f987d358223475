"""Plans: this session's plans (`AgentCore.plans`): finding, live statuses, the reminder, review.

With review on (`reviewPlans`, or the notebook's `review_plans`), `reasoning_plan` holds
each plan in the PlanBook with a PlanDraft of it. Approving saves the draft through the
reasoning server's one backend path (task server, fallback or queue, with its warnings and
rollback) and queues one prompt telling the model; sending it back queues the user's
reason; discarding leaves a note. A saved task-server plan is edited on the server itself
(`SavedPlanEdit`), the agent told at its next turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

from ollie_nb.core._events import PlanDecided
from ollie_nb.core._queue import PromptQueue
from ollie_nb.core._reminder import plan_reminder_text
from ollie_nb.core._tool_servers import wire_plan_backend
from ollie_nb.errors import (
    NoPlanError,
    NoTaskServerError,
    NotStartedError,
    PlanDecidedError,
    PlanReviewError,
    StepRetryError,
)
from ollie_nb.planning import (
    Deleted,
    DraftStep,
    Origin,
    PlanBook,
    PlanDraft,
    PlanRecord,
    PlanStep,
    QueuedPrompt,
    QueuePlanBackend,
    Review,
    StepState,
    TaskCallError,
    TaskClient,
    approval_prompt,
    discard_note,
    edited_note,
    format_plan,
    rejection_prompt,
)

if TYPE_CHECKING:
    from ollie_nb.core._tool_servers import ToolServers

log = logging.getLogger("ollie_nb.core")

_GONE = {
    Review.APPROVED: "is approved and saved already; edit it with %ollie plan edit {n}",
    Review.REJECTED: "was sent back for changes; the model's revision is a new plan",
    Review.DISCARDED: "was discarded",
}


ServersOf = Callable[[], "ToolServers | None"]
"""The agent's tool servers as they are now (None before it starts)."""

DecisionListener = Callable[[PlanDecided], None]
"""Told of each review decision, on the core's loop (an editor hands it to its own thread)."""


class Plans(Sequence[PlanRecord]):
    """This session's plans (a sequence, oldest first) and what is done with them: find one,
    read its live statuses, remind the model of it, review a held one, edit a saved one."""

    def __init__(
        self,
        prompts: PromptQueue,
        env: ServersOf,
        running: Callable[[], bool],
        saved: Callable[[], None],
        *,
        agent_reviews: Callable[[], bool] = lambda: False,
        fallback: Any = None,
        queue_fallback: bool = False,
    ) -> None:
        self.book = PlanBook()  # the one owner of this session's plans
        self._prompts = prompts
        self._env = env
        self._running = running  # a turn is running: what the user says is injected into it
        self._saved = saved  # a review changed a plan: the session is saved
        self._queued: dict[int, QueuedPrompt] = {}  # the prompt each review queued, by plan
        self._listeners: list[DecisionListener] = []
        self.review: bool | None = None  # hold plans for review; None: the agent's reviewPlans
        self._agent_reviews = agent_reviews  # the agent file's `reviewPlans`, as it is now
        self.fallback = fallback  # the plan backend used when no task server holds plans
        self.queue_fallback = queue_fallback  # without a fallback: the prompt queue, when True

    @property
    def reviewing(self) -> bool:
        """Whether plans are held for the user's review: `review` when set, else the agent's
        `reviewPlans`."""
        return self._agent_reviews() if self.review is None else self.review

    def effective_fallback(self) -> Any:
        """Where plans go without a task server: the fallback set, else the queue if asked."""
        if self.fallback is not None:
            return self.fallback
        if self.queue_fallback:
            return QueuePlanBackend(self._prompts.put, lambda: self.book.making_number)
        return None

    async def set_fallback(self, backend: Any) -> None:
        """Set (or with None clear) the fallback and re-wire; a task server still wins."""
        self.fallback = backend
        servers = self._env()
        if servers is not None:
            wire_plan_backend(servers, self.effective_fallback())

    @overload
    def __getitem__(self, index: int) -> PlanRecord: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[PlanRecord]: ...
    def __getitem__(self, index: int | slice) -> PlanRecord | Sequence[PlanRecord]:
        return self.book.records[index]

    def __len__(self) -> int:
        return len(self.book.records)

    def find(self, key: str | int | None = None) -> PlanRecord | None:
        """The latest plan, or the one with this number, goal id, step id or goal text."""
        return self.book.find(key)

    async def statuses(self, record: PlanRecord) -> dict[str, StepState]:
        """Each step's live state: from the task server when one holds the plan, else the queue."""
        if record.kind == "queue":
            return self.book.queue_states(record)
        env = self._env()
        reader = env.status_reader if env else None
        if record.kind == "tasks" and reader is not None and record.goal_id:
            return await reader.read_statuses(record.goal_id, record.ids)
        return {}

    async def reminder(self) -> str:
        """The latest plan as a reminder for the model while some step of it is open."""
        record = self.book.find()
        if record is None or record.review not in (None, Review.APPROVED):
            return ""
        try:
            statuses = await self.statuses(record)
        except Exception as exc:  # the task server is down: remind of the plan as it was made
            log.info("plan statuses unknown for the reminder: %s", exc)
            statuses = {}
        return plan_reminder_text(record, statuses)

    def keep_draft(self, number: int, draft: PlanDraft) -> None:
        """Keep `draft` as held plan `number`'s (an editor's work survives the session)."""
        self.book.set_draft(number, draft)
        self._saved()

    def listen(self, listener: DecisionListener) -> None:
        """Tell `listener` of every decision on a held plan from now on, wherever it is made."""
        self._listeners.append(listener)

    def unlisten(self, listener: DecisionListener) -> None:
        """Stop telling `listener` (one that is not listening is fine)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _decided(self, record: PlanRecord) -> None:
        """Tell every listener that `record` was decided; a failing listener is logged."""
        for listener in list(self._listeners):
            try:
                listener(PlanDecided(record))
            except Exception:
                log.exception("a plan decision listener failed")

    def held_note(self) -> str:
        """What resuming says of the plans still held for the user's review."""
        return held_note_text([r.number for r in self.book.held()])

    # -- review --------------------------------------------------------------------------

    def held(self) -> list[PlanRecord]:
        """The plans waiting for the user's review, oldest first."""
        return self.book.held()

    def draft(self, number: int) -> PlanDraft:
        """A copy of plan `number`'s draft: a held plan's as the user left it, else its steps."""
        record = self.record(number)
        if record.held:
            return self.book.draft(number).copy()
        ids = record.ids if len(record.ids) == len(record.steps) else ()
        return PlanDraft.from_plan(record.goal, record.steps, ids)

    def record(self, number: int) -> PlanRecord:
        """Plan `number` (NoPlanError naming the plans there are)."""
        if isinstance(number, bool) or not isinstance(number, int):
            raise NoPlanError(f"a plan is given by its number, not {number!r}")
        record = self.book.get(number)
        if record is None:
            count = len(self.book.records)
            there = (
                f"plans 1 to {count}" if count > 1 else "only plan 1" if count else "no plans yet"
            )
            raise NoPlanError(f"there is no plan {number} (this session has {there})")
        return record

    def _held(self, number: int) -> PlanRecord:
        record = self.record(number)
        if record.review is None:
            raise PlanReviewError(
                f"plan {number} was not held for review: it was saved when it was made"
            )
        if not record.held:
            raise PlanDecidedError(f"plan {number} {_GONE[record.review].format(n=number)}")
        if self.book.saving:  # one plan is sent to the backend at a time (a double click)
            raise PlanReviewError(f"plan {self.book.saving} is being saved now; wait for it")
        return record

    # -- held plans ----------------------------------------------------------------------

    async def approve(self, number: int, draft: PlanDraft | None = None) -> PlanRecord:
        """Save held plan `number` (as `draft` edits it) through the plan backend and queue one
        prompt telling the model, with the user's edits and the new step ids."""
        record = self._held(number)
        draft = draft if draft is not None else self.book.draft(number)
        steps = _checked(draft, number, "approved")
        env = self._env()
        if env is None:
            raise NotStartedError("the agent has not started: await core.start() first")
        self.book.saving = number  # a queue backend's step items name this plan
        try:
            saved = await env.reasoning.persist(draft.goal, steps, number)
        finally:
            self.book.saving = 0
        record = replace(saved, created=record.created, review=Review.APPROVED)
        self.book.replace(record)
        item = QueuedPrompt(approval_prompt(record, draft.edits()), Origin.REVIEW)
        if record.kind == "queue":  # told first, then handed the steps one by one
            self._prompts.put_before_plan(item, number)
        else:
            self._prompts.put(item)
        self._queued[number] = item
        self._saved()  # a resumed session finds the plan as the user left it
        self._decided(record)
        return record

    def reject(self, number: int, reason: str, draft: PlanDraft | None = None) -> PlanRecord:
        """Send held plan `number` back with the user's reason (queued for the model)."""
        record = self._held(number)
        reason = " ".join(str(reason).split())
        if not reason:
            raise PlanReviewError(f"say what should change in plan {number}: the reason is empty")
        draft = draft if draft is not None else self.book.draft(number)
        reviewed = ""
        if draft.changed:
            edits = "\n".join(f"- {e}" for e in draft.edits())
            shown = format_plan(draft.goal, draft.steps()) if draft.valid else ""
            reviewed = "\n".join(p for p in ("The user's edits:", edits, shown) if p)
        record = replace(record, review=Review.REJECTED)
        self.book.replace(record)
        item = QueuedPrompt(rejection_prompt(number, reason, reviewed), Origin.REVIEW)
        self._prompts.put(item)
        self._queued[number] = item
        self._saved()
        self._decided(record)
        return record

    def discard(self, number: int) -> PlanRecord:
        """Drop held plan `number`: nothing is saved; the model reads so at its next turn."""
        record = replace(self._held(number), review=Review.DISCARDED)
        self.book.replace(record)
        self._prompts.note(discard_note(number))
        self._saved()
        self._decided(record)
        return record

    def take_prompt(self, number: int) -> QueuedPrompt | None:
        """The prompt the review of plan `number` queued, off the queue (None when it is gone)."""
        item = self._queued.pop(number, None)
        return item if item is not None and self._prompts.remove(item) else None

    # -- saved plans -----------------------------------------------------------------------

    async def edit_saved(self, number: int, draft: PlanDraft) -> list[str]:
        """Apply `draft` to saved plan `number` (on its task server: task_edit, task_dep,
        task_create, task_delete); the changes, one line each, also told to the agent."""
        record = self.record(number)
        if record.held:
            raise PlanReviewError(
                f"plan {number} is held for review: edit its draft and approve it "
                f"(%ollie plan approve {number})"
            )
        if record.review in (Review.REJECTED, Review.DISCARDED):
            raise PlanReviewError(f"plan {number} {_GONE[record.review]}: nothing of it is saved")
        steps = _checked(draft, number, "saved")
        if record.kind == "queue":
            raise PlanReviewError(
                f"plan {number} lives on the prompt queue, whose queued steps cannot be "
                "edited; drop them with %ollie queue clear and ask for a new plan"
            )
        if record.kind == "custom":
            raise PlanReviewError(
                f"plan {number} was saved by {record.backend}, which ollie_nb cannot edit; "
                "change it there"
            )
        if record.kind == "context":
            changes = draft.edits()
            new = replace(record, goal=draft.goal, steps=steps)
        else:
            changes, ids = await SavedPlanEdit(self._client(number), record, draft).apply(
                await self.statuses(record)
            )
            new = replace(record, goal=draft.goal, steps=steps, ids=ids)
        if not changes:
            self._saved()
            return []
        ids_or_none = new.ids if new.ids else None
        new = replace(new, text=format_plan(new.goal, steps, ids_or_none, new.status, new.goal_id))
        self.book.replace(new)
        self._tell(edited_note(new, changes))
        self._saved()
        return changes

    async def retry(self, number: int, step: str | int) -> list[str]:
        """Reopen step `step` of plan `number` (its id, or its number in the plan) and the
        steps failed, skipped or handed back after it, for whoever serves the plan."""
        record = self.record(number)
        env = self._env()
        if record.kind != "tasks" or env is None or env.task_client is None:
            raise NoTaskServerError(f"plan {number} is not on a wired task server: no retry")
        step_id = _step_id(record, step)
        try:
            return await env.task_client.retry(step_id, note=f"retried (plan {number})")
        except ValueError as error:
            raise StepRetryError(f"plan {number}: {error}") from error

    def _client(self, number: int) -> TaskClient:
        env = self._env()
        if env is None or env.task_client is None or env.task_server is None:
            raise NoTaskServerError(
                f"plan {number} is on a task server, and none is wired now (see %ollie mcp)"
            )
        missing = env.task_client.caps.missing_for_edits
        if missing:
            raise NoTaskServerError(
                f"the task server '{env.task_server}' has no {', '.join(missing)}: "
                f"plan {number} cannot be edited there"
            )
        return env.task_client

    def _tell(self, text: str) -> None:
        """Tell the agent: into the running turn, else at the start of its next one."""
        if self._running():
            self._prompts.inject(text)
        else:
            self._prompts.note(text)


def _step_id(record: PlanRecord, step: str | int) -> str:
    """A plan's step by its id or its 1-based number (PlanReviewError when neither)."""
    text = str(step).strip()
    if text in record.ids:
        return text
    if text.isdigit() and 1 <= int(text) <= len(record.ids):
        return record.ids[int(text) - 1]
    raise StepRetryError(f"plan {record.number} has no step {text!r}")


def held_note_text(numbers: list[int]) -> str:
    """What resuming says of plans `numbers`, held for the user's review ('' for none)."""
    if not numbers:
        return ""
    which = ", ".join(str(n) for n in numbers)
    plans = "plan {} awaits" if len(numbers) == 1 else "plans {} await"
    return plans.format(which) + " your review: %ollie plan show N, %ollie plan approve N"


def _checked(draft: PlanDraft, number: int, what: str) -> tuple[PlanStep, ...]:
    problems = draft.problems()
    if problems:
        raise PlanReviewError(f"plan {number} cannot be {what}: {problems[0]}")
    return draft.steps()


@dataclass
class SavedPlanEdit:
    """A draft applied to a saved task-server plan: new tasks, edits, edges, deletions.

    Everything is checked before the first call: a step done or claimed (in progress) is
    neither deleted nor re-pointed (its blockers changed).
    """

    client: TaskClient
    record: PlanRecord
    draft: PlanDraft

    async def apply(self, statuses: dict[str, StepState]) -> tuple[list[str], tuple[str, ...]]:
        """(the changes made, one line each; the plan's step ids in the draft's step order)."""
        record, rows = self.record, self.draft.ordered_rows()
        before = {task_id: step for task_id, step in zip(record.ids, record.steps)}
        index_of = {task_id: i for i, task_id in enumerate(record.ids)}
        kept = {r.task_id for r in rows if r.task_id}
        unknown = kept - set(before)
        if unknown:
            raise PlanReviewError(
                f"the draft names tasks that are not steps of plan {record.number}: "
                + ", ".join(sorted(unknown))
            )
        gone = [i for i in record.ids if i not in kept]
        self._refuse(rows, gone, statuses, index_of)
        ids: dict[int, str] = {r.key: r.task_id for r in rows if r.task_id}
        changes: list[str] = []
        try:
            await self._goal(changes)
            for row in rows:
                if not row.task_id:
                    ids[row.key] = await self._create(row, ids, changes)
            for row in rows:
                if row.task_id:
                    await self._revise(row, before[row.task_id], ids, record.ids, changes)
            for task_id in gone:
                if await self.client.delete(task_id) is not Deleted.DELETED:
                    raise TaskCallError(f"deleting {task_id} was refused")
                changes.append(f"deleted step {index_of[task_id] + 1} [{task_id}]")
        except TaskCallError as exc:
            done = "; ".join(changes) or "nothing"
            raise TaskCallError(
                f"editing plan {record.number} stopped: {exc} (done before: {done}); "
                "see %ollie tasks"
            ) from None
        return changes, tuple(ids[r.key] for r in rows)

    def _refuse(
        self,
        rows: Sequence[DraftStep],
        gone: Sequence[str],
        statuses: dict[str, StepState],
        index_of: dict[str, int],
    ) -> None:
        def locked(task_id: str) -> str:
            state = statuses.get(task_id, StepState.UNKNOWN)
            return "done" if state is StepState.DONE else "claimed" if state.is_active else ""

        for task_id in gone:
            if locked(task_id):
                raise PlanReviewError(
                    f"step {index_of[task_id] + 1} [{task_id}] is {locked(task_id)}: "
                    "it cannot be deleted"
                )
        keys = {r.key: r for r in rows}
        for row in rows:
            if not row.task_id or not locked(row.task_id):
                continue
            old = self.record.steps[index_of[row.task_id]].after
            now = {keys[k].task_id or f"new:{k}" for k in row.after if k in keys}
            if now != {self.record.ids[j] for j in old}:
                raise PlanReviewError(
                    f"step {index_of[row.task_id] + 1} [{row.task_id}] is "
                    f"{locked(row.task_id)}: what it waits for cannot be changed"
                )
        for row in rows:
            old_body = self.record.steps[index_of[row.task_id]].body if row.task_id else ""
            if row.task_id and old_body and not row.body:
                raise PlanReviewError(
                    f"step {index_of[row.task_id] + 1} [{row.task_id}]: a task's description "
                    "cannot be emptied on the task server; write a short one instead"
                )

    async def _goal(self, changes: list[str]) -> None:
        if self.draft.goal != self.record.goal and self.record.goal_id:
            await self.client.edit(self.record.goal_id, title=self.draft.goal)
            changes.append(f"goal changed to {self.draft.goal!r}")

    async def _create(self, row: DraftStep, ids: dict[int, str], changes: list[str]) -> str:
        blockers = [ids[k] for k in row.after if k in ids]
        fields: dict[str, object] = {"title": row.title, "body": row.body}
        fields["parent"] = self.record.goal_id
        if blockers:
            fields["blockers"] = blockers
        task_id = await self.client.create(**fields)
        changes.append(f"added step {row.title!r} [{task_id}]")
        return task_id

    async def _revise(
        self,
        row: DraftStep,
        old: PlanStep,
        ids: dict[int, str],
        old_ids: Sequence[str],
        changes: list[str],
    ) -> None:
        label = f"step [{row.task_id}]"
        edit: dict[str, str] = {}
        if row.title != old.title:
            edit["title"] = row.title
            changes.append(f"{label}: title changed to {row.title!r}")
        if row.body != old.body:
            edit["body"] = row.body
            changes.append(f"{label}: description changed")
        if edit:
            await self.client.edit(row.task_id, **edit)
        was = {old_ids[j] for j in old.after}
        now = {ids[k] for k in row.after if k in ids}
        for blocker in sorted(now - was):
            await self.client.depend(row.task_id, blocker)
            changes.append(f"{label} now waits for [{blocker}]")
        for blocker in sorted(was - now):
            await self.client.depend(row.task_id, blocker, remove=True)
            changes.append(f"{label} no longer waits for [{blocker}]")
