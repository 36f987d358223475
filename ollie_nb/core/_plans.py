"""PlanBook: the session's plans across agent switches, and the progress of queue plans."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ollie_nb.planning import PlanRecord


class PlanBook:
    """Plans of envs that are gone (or restored), and the step states of queue plans.

    Queue plans' step ids are `q1..qN` in every plan, so a queued step prompt is
    attributed to the latest queue plan, the one whose prompts are in the queue.
    """

    def __init__(self, past: Iterable[PlanRecord] = ()) -> None:
        self.past: list[PlanRecord] = list(past)
        self._queue_states: dict[int, dict[str, str]] = {}
        self._latest_queue_plan: int | None = None

    def all(self, live: Sequence[PlanRecord]) -> list[PlanRecord]:
        """Every plan: the past ones, then the live env's."""
        return [*self.past, *live]

    def retire(self, live: Sequence[PlanRecord]) -> None:
        """Keep the plans of an env that is closing."""
        self.past.extend(live)

    def added(self, record: PlanRecord) -> None:
        """Note a new plan; a queue plan's steps start as todo."""
        if record.kind == "queue":
            self._queue_states[record.number] = dict.fromkeys(record.ids, "todo")
            self._latest_queue_plan = record.number

    def mark_queue_step(self, step_id: str, state: str) -> None:
        """Set the state of a step of the latest queue plan."""
        states = self._queue_states.get(self._latest_queue_plan or -1)
        if states is not None and step_id in states:
            states[step_id] = state

    def queue_statuses(self, record: PlanRecord) -> dict[str, str]:
        return dict(self._queue_states.get(record.number, {}))

    @staticmethod
    def find(plans: Sequence[PlanRecord], key: str | int | None) -> PlanRecord | None:
        """The latest plan, or the one with this number, goal id or step id."""
        if key in (None, ""):
            return plans[-1] if plans else None
        text = str(key).lstrip("#")
        for record in reversed(plans):
            if text == str(record.number) or text == record.goal_id or text in record.ids:
                return record
        return None
