"""What task events lead to: ready or assigned steps queued once, others' work noted, plans finished.

The watcher (`_watch`) reads the events; this module decides. A step is queued only
when its live state is open, every step it comes after is done, it is not in the
queue already and this agent has not worked it: so several events for one step, a new
watcher, or the agent's own updates never queue a step twice. It is handed narrow
callables (`WatchHooks`), never the agent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ollie_nb.core._events import WatchNotice, WatchWhat
from ollie_nb.planning import (
    Origin,
    PlanRecord,
    QueuedPrompt,
    StepState,
    read_state,
    state_label,
    step_item,
)
from ollie_nb.planning.prompts import ASSIGNED_NOTE, READY_NOTE

States = dict[str, StepState]


@dataclass(frozen=True)
class WatchHooks:
    """What the watch may read and do: the agent's plans, queue and worked steps, notes, events."""

    plans: Callable[[], Sequence[PlanRecord]]
    enqueue: Callable[[QueuedPrompt], Any]
    queued: Callable[[], Sequence[QueuedPrompt]]
    worked: Callable[[], Collection[str]]  # step ids this agent has taken (worked or working)
    statuses: Callable[[PlanRecord], Awaitable[States]]
    note: Callable[[str], None]  # told to the agent at its next turn
    emit: Callable[[WatchNotice], None]  # shown by the frontend
    reopened: Callable[[str], None] = lambda _step: None  # a retried step: taken no more


def step_of(plans: Sequence[PlanRecord], task_id: str) -> tuple[PlanRecord, int] | None:
    """The task-server plan (latest first) and index of the step with this task id."""
    if not task_id:
        return None
    for record in reversed(plans):
        if record.kind == "tasks" and task_id in record.ids:
            return record, record.ids.index(task_id)
    return None


class Reactions:
    """Turns batches of task events into queued step prompts, notes and watch events."""

    def __init__(self, hooks: WatchHooks, name: str) -> None:
        self.hooks = hooks
        self.name = name
        self._finished: set[int] = set()  # plans already announced (or found) finished
        self._status: States = {}  # task id -> state: read once, then kept by the events

    async def _statuses(self, record: PlanRecord) -> States:
        """The plan's step states, read from the server only for steps not known yet."""
        if any(i not in self._status for i in record.ids):
            read = await self.hooks.statuses(record)
            self._status.update((i, read_state(word)) for i, word in read.items())
        return {i: self._status[i] for i in record.ids if i in self._status}

    def known(self, record: PlanRecord) -> States:
        """The plan's step states as the events have kept them, with no read."""
        return {i: self._status[i] for i in record.ids if i in self._status}

    def _track(self, event: dict[str, Any], payload: dict[str, Any]) -> None:
        task, kind = str(event.get("task") or ""), event.get("type")
        if kind == "created":
            self._status[task] = StepState.OPEN
        elif kind == "status_changed" and isinstance(payload.get("to"), str):
            self._status[task] = read_state(payload["to"])
        elif kind == "deleted":
            self._status.pop(task, None)

    async def catch_up(self) -> list[str]:
        """Queue every ready step of our plans now: a new watch (or kernel) finds them again."""
        lines: list[str] = []
        for record in self.hooks.plans():
            if record.kind != "tasks" or not record.ids:
                continue
            statuses = await self._statuses(record)
            if _all_finished(record, statuses):
                self._finished.add(record.number)
                continue
            for index in range(len(record.ids)):
                if self._ready(record, index, statuses):
                    lines.append(self._queue(record, index, READY_NOTE))
        return lines

    async def react(self, events: Sequence[dict[str, Any]]) -> list[str]:
        """Act on new events; return one line per thing done (the watch log keeps them)."""
        plans = self.hooks.plans()
        wanted: dict[str, tuple[PlanRecord, int, str]] = {}
        closed: list[tuple[PlanRecord, int, StepState]] = []
        for event in events:
            given = event.get("payload")
            payload: dict[str, Any] = given if isinstance(given, dict) else {}
            self._track(event, payload)
            found = step_of(plans, str(event.get("task") or ""))
            if found is None:
                continue
            record, index = found
            kind, state = event.get("type"), read_state(payload.get("to"))
            if kind == "unblocked":
                wanted.setdefault(record.ids[index], (record, index, READY_NOTE))
            elif kind == "updated" and "reopened" in payload:  # retried: ready again
                self.hooks.reopened(record.ids[index])
                wanted[record.ids[index]] = (record, index, READY_NOTE)
            elif kind == "updated" and self.name and payload.get("assignee") == self.name:
                wanted[record.ids[index]] = (record, index, ASSIGNED_NOTE)
            elif kind == "status_changed" and state.is_closed:
                closed.append((record, index, state))
        lines = [self._closed(*c) for c in closed if c[0].ids[c[1]] not in self.hooks.worked()]
        touched = {r.number: r for r, _, _ in [*wanted.values(), *closed]}
        live = {n: await self._statuses(r) for n, r in touched.items()}
        for record, index, note in sorted(wanted.values(), key=lambda w: (w[0].number, w[1])):
            if self._ready(record, index, live[record.number]):
                lines.append(self._queue(record, index, note))
        for number, record in touched.items():
            lines.extend(self._maybe_finished(record, live[number]))
        return [line for line in lines if line]

    def own_update(self, task_id: str, status: str) -> list[str]:
        """The agent's own successful task_update: keep the status, queue what it made ready.

        Readiness by the plan's own order, known at once: the turn after needs no wait for
        the change signal's round trip. The events that follow find those steps queued.
        """
        if not status:
            return []
        state = self._status[task_id] = read_state(status)
        found = step_of(self.hooks.plans(), task_id)
        if state is not StepState.DONE or found is None:
            return []
        record, done = found
        if any(i not in self._status for i in record.ids):
            return []  # not all known yet: the events will tell
        statuses = {i: self._status[i] for i in record.ids}
        lines = [
            self._queue(record, j, READY_NOTE)
            for j, step in enumerate(record.steps)
            if done in step.after and self._ready(record, j, statuses)
        ]
        return lines + self._maybe_finished(record, statuses)

    def _ready(self, record: PlanRecord, index: int, statuses: States) -> bool:
        step_id = record.ids[index]
        if not statuses.get(step_id, StepState.UNKNOWN).is_open:
            return False
        if step_id in self.hooks.worked():
            return False
        unknown = StepState.UNKNOWN
        if not all(
            statuses.get(record.ids[j], unknown).unblocks for j in record.steps[index].after
        ):
            return False
        queued = (item.step for item in self.hooks.queued())
        return all(step is None or step.step_id != step_id for step in queued)

    def _queue(self, record: PlanRecord, index: int, note: str) -> str:
        text = note.format(goal=record.goal, name=self.name)
        self.hooks.enqueue(step_item(record, index, Origin.WATCH, note=text))
        why = "assigned to you" if note is ASSIGNED_NOTE else "ready"
        line = f"step {index + 1} of plan {record.number} is {why} ({record.ids[index]}); queued"
        self.hooks.emit(WatchNotice(line, WatchWhat.QUEUED, record, record.ids[index]))
        return line

    def _closed(self, record: PlanRecord, index: int, state: StepState) -> str:
        title, status = record.steps[index].title, state_label(state)
        line = (
            f"step {index + 1} of plan {record.number} is {status} ({record.ids[index]}), "
            f"marked by another client: {title}"
        )
        self.hooks.note(line)
        what = WatchWhat.of_status(status)
        self.hooks.emit(WatchNotice(line, what, record, record.ids[index]))
        return line

    def _maybe_finished(self, record: PlanRecord, statuses: States) -> list[str]:
        if record.number in self._finished:
            return []
        if not _all_finished(record, statuses):
            return []
        self._finished.add(record.number)
        line = f"plan {record.number} is finished: {record.goal} (all {len(record.ids)} steps done)"
        self.hooks.emit(WatchNotice(line, WatchWhat.FINISHED, record, statuses=statuses))
        return [line]


def _all_finished(record: PlanRecord, statuses: States) -> bool:
    return all(statuses.get(i, StepState.UNKNOWN).is_finished for i in record.ids)
