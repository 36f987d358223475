"""PlanBook: the one owner of a session's plans, and of the step states of its queue plans.

The reasoning server writes each plan it makes here (`add`); the agent keeps the book
across agent switches and sessions (`reset` on clear and restore), and every reader
(`AgentCore.plans`, the watch, the parallel run, `%ollie plans`) asks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ollie_nb.errors import NoPlanError
from ollie_nb.planning._draft import PlanDraft
from ollie_nb.planning._state import StepState
from ollie_nb.planning._steps import StepRef
from ollie_nb.planning._types import PlanRecord


class PlanBook:
    """The session's plans in the order they were made, numbered 1, 2, ..."""

    def __init__(self, records: Iterable[PlanRecord] = ()) -> None:
        self.records: list[PlanRecord] = []
        self._queue_states: dict[int, dict[str, StepState]] = {}
        self._drafts: dict[int, PlanDraft] = {}  # the held plans' drafts, by plan number
        self.saving = 0  # the number of a held plan a backend is saving now (0: none)
        self.reset(records)

    def reset(
        self, records: Iterable[PlanRecord] = (), drafts: Mapping[int, PlanDraft] | None = None
    ) -> None:
        """Hold these plans only (a cleared or restored session), held ones with their drafts."""
        self.records.clear()
        self._queue_states.clear()
        self._drafts.clear()
        for record in records:
            self.add(record)
            if record.held:
                self._drafts[record.number] = (drafts or {}).get(record.number) or _draft_of(record)

    @property
    def next_number(self) -> int:
        """The number the next plan gets."""
        return len(self.records) + 1

    @property
    def making_number(self) -> int:
        """The number of the plan a backend makes now: a held plan being saved, else the next."""
        return self.saving or self.next_number

    # -- plans held for review ---------------------------------------------------------

    def hold(self, record: PlanRecord) -> None:
        """Keep a new plan held for review, with a draft of it as the model made it."""
        self.add(record)
        self._drafts[record.number] = _draft_of(record)

    def held(self) -> list[PlanRecord]:
        """The plans waiting for the user's review, oldest first."""
        return [r for r in self.records if r.held]

    def draft(self, number: int) -> PlanDraft:
        """The draft of held plan `number`, as the user left it (NoPlanError when not held)."""
        draft = self._drafts.get(number)
        if draft is None:
            raise NoPlanError(f"plan {number} is not held for review")
        return draft

    def drafts(self) -> dict[int, PlanDraft]:
        """The held plans' drafts, by plan number (saved with the session)."""
        return dict(self._drafts)

    def set_draft(self, number: int, draft: PlanDraft) -> None:
        """Keep `draft` as held plan `number`'s (NoPlanError when not held)."""
        self.draft(number)
        self._drafts[number] = draft

    def get(self, number: int) -> PlanRecord | None:
        """The plan numbered `number`, if there is one."""
        return next((r for r in self.records if r.number == number), None)

    def replace(self, record: PlanRecord) -> None:
        """Put `record` in place of the plan of its number (reviewed, saved or edited)."""
        for index, old in enumerate(self.records):
            if old.number == record.number:
                self.records[index] = record
                break
        else:
            raise NoPlanError(f"there is no plan {record.number}")
        if record.kind == "queue" and record.number not in self._queue_states:
            self._queue_states[record.number] = dict.fromkeys(record.ids, StepState.OPEN)
        if not record.held:
            self._drafts.pop(record.number, None)

    def add(self, record: PlanRecord) -> None:
        """Keep a new plan; a queue plan's steps start open."""
        self.records.append(record)
        if record.kind == "queue":
            self._queue_states[record.number] = dict.fromkeys(record.ids, StepState.OPEN)

    def mark(self, step: StepRef, state: StepState) -> None:
        """Set the state of a queue plan's step (the plan the StepRef names)."""
        self.mark_queue_step(step.plan, step.step_id, state)

    def mark_queue_step(self, plan: int, step_id: str, state: StepState) -> None:
        states = self._queue_states.get(plan)
        if states is not None and step_id in states:
            states[step_id] = state

    def waits_for(self, step: StepRef) -> dict[str, StepState]:
        """The blockers of a queue plan's step that do not let it start (failed, skipped or
        not done), with their states: empty when it may be worked."""
        record, states = self.get(step.plan), self._queue_states.get(step.plan)
        if record is None or states is None or step.index >= len(record.steps):
            return {}
        blockers = (record.ids[j] for j in record.steps[step.index].after)
        found = {b: states.get(b, StepState.UNKNOWN) for b in blockers}
        return {b: state for b, state in found.items() if not state.unblocks}

    def queue_states(self, record: PlanRecord) -> dict[str, StepState]:
        """Each step's state of a queue plan (empty for other plans)."""
        return dict(self._queue_states.get(record.number, {}))

    def find(self, key: str | int | None = None) -> PlanRecord | None:
        """The latest plan, or the one with this number, goal id, step id or goal text."""
        return find_plan(self.records, key)


def _draft_of(record: PlanRecord) -> PlanDraft:
    return PlanDraft.from_plan(record.goal, record.steps, record.ids)


def find_plan(plans: Sequence[PlanRecord], key: str | int | None) -> PlanRecord | None:
    """The latest plan, or the one with this number, goal id, step id or goal text."""
    if key in (None, ""):
        return plans[-1] if plans else None
    text = str(key).lstrip("#")
    for record in reversed(plans):
        if text == str(record.number) or text == record.goal_id or text in record.ids:
            return record
    return plan_by_goal(plans, str(key))


def plan_by_goal(plans: Sequence[PlanRecord], text: str) -> PlanRecord | None:
    """The plan whose goal is `text` (the latest of equal ones), else the one goal that starts
    with it or holds it, case aside; NoPlanError naming the candidates when several do."""
    words = " ".join(text.split())
    if not words:
        return None
    folded = words.casefold()
    goals = [(" ".join(r.goal.split()), r) for r in plans]
    exact = [r for goal, r in goals if goal == words or goal.casefold() == folded]
    if exact:
        return exact[-1]
    for found in (
        [r for goal, r in goals if goal.casefold().startswith(folded)],
        [r for goal, r in goals if folded in goal.casefold()],
    ):
        if len(found) == 1:
            return found[0]
        if found:
            names = "; ".join(f"{r.number}: {r.goal[:40]}" for r in found)
            raise NoPlanError(
                f"{len(found)} plans match {words[:40]!r} ({names}); give the plan's number"
            )
    return None
