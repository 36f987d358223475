"""PlanDraft: a plan being reviewed, edited row by row before it is saved or worked.

The user edits a draft (in the editor widget, with `%ollie plan edit`, or from code);
the draft checks itself with the rules `reasoning_plan` applies (titles, sizes, edge
limits) and one more that row order allows: no cycles. Rows may be moved above a step
they wait for; `steps()` puts them back in an order that respects every edge, keeping
the user's order where it can. Step numbers in this API are 1-based, as shown to the user.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ollie_nb.planning._text import format_plan
from ollie_nb.planning._types import PlanStep
from ollie_nb.planning._validate import PlanValidationError, parse_plan


@dataclass(frozen=True)
class DraftStep:
    """One row of a draft: `key` names it across edits, `after` holds keys of the rows it
    waits for, `task_id` the task it is saved as (empty until saved)."""

    key: int
    title: str
    body: str = ""
    after: tuple[int, ...] = ()
    task_id: str = ""


@dataclass
class PlanDraft:
    """A goal and its rows, as the user is editing them; `original` is what the model made."""

    goal: str
    rows: list[DraftStep] = field(default_factory=list)
    original: tuple[DraftStep, ...] = ()
    original_goal: str = ""

    @classmethod
    def from_plan(cls, goal: str, steps: Sequence[PlanStep], ids: Sequence[str] = ()) -> PlanDraft:
        """A draft of a plan as made, one row per step (keys 0, 1, ...)."""
        rows = [
            DraftStep(i, s.title, s.body, tuple(s.after), ids[i] if i < len(ids) else "")
            for i, s in enumerate(steps)
        ]
        return cls(goal, list(rows), tuple(rows), goal)

    def copy(self) -> PlanDraft:
        """A draft the caller may edit without touching this one."""
        return PlanDraft(self.goal, list(self.rows), self.original, self.original_goal)

    def to_dict(self) -> dict[str, Any]:
        """The draft as JSON data (a held plan's draft is saved with the session)."""
        return {
            "goal": self.goal,
            "original_goal": self.original_goal,
            "rows": [_row_dict(r) for r in self.rows],
            "original": [_row_dict(r) for r in self.original],
        }

    @classmethod
    def from_dict(cls, data: Any) -> PlanDraft:
        """A draft from `to_dict` data; ValueError when it is not such data."""
        if not isinstance(data, dict):
            raise ValueError(f"a plan draft is a JSON object, not {type(data).__name__}")
        try:
            rows = [_row(r) for r in data["rows"]]
            original = tuple(_row(r) for r in data.get("original", ()))
            return cls(str(data["goal"]), rows, original, str(data.get("original_goal", "")))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed plan draft ({exc})") from None

    # -- reading -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, number: int) -> DraftStep:
        """The row shown as step `number` (1-based); PlanValidationError when there is none."""
        if isinstance(number, bool) or not isinstance(number, int):
            raise PlanValidationError(f"a step number is an integer, got {number!r}")
        if not 1 <= number <= len(self.rows):
            raise PlanValidationError(
                f"there is no step {number}; the plan has steps 1 to {len(self.rows)}"
                if self.rows
                else f"there is no step {number}; the plan has no steps"
            )
        return self.rows[number - 1]

    def number_of(self, key: int) -> int:
        """The 1-based number of the row with this key."""
        for i, row in enumerate(self.rows, 1):
            if row.key == key:
                return i
        raise PlanValidationError(f"no row has key {key}")

    def after_numbers(self, number: int) -> list[int]:
        """The step numbers step `number` waits for."""
        return [self.number_of(k) for k in self.row(number).after]

    # -- editing -------------------------------------------------------------------------

    def set_goal(self, goal: str) -> None:
        self.goal = " ".join(str(goal).split())

    def set_title(self, number: int, title: str) -> None:
        self._put(number, title=" ".join(str(title).split()))

    def set_body(self, number: int, body: str) -> None:
        self._put(number, body=str(body).strip())

    def set_after(self, number: int, after: Iterable[int]) -> None:
        """Make step `number` wait for exactly these step numbers."""
        keys = [self.row(n).key for n in after]
        me = self.row(number).key
        if me in keys:
            raise PlanValidationError(f"step {number} cannot wait for itself")
        self._put(number, after=tuple(dict.fromkeys(keys)))

    def add_dependency(self, number: int, on: int) -> None:
        """Make step `number` wait for step `on` as well."""
        self.set_after(number, [*self.after_numbers(number), on])

    def remove_dependency(self, number: int, on: int) -> None:
        self.set_after(number, [n for n in self.after_numbers(number) if n != on])

    def add(self, title: str, body: str = "", after: Iterable[int] = (), at: int = 0) -> int:
        """Add a row (at the end, or to be step `at`); returns its number."""
        keys = tuple(dict.fromkeys(self.row(n).key for n in after))
        key = 1 + max((r.key for r in (*self.rows, *self.original)), default=-1)
        row = DraftStep(key, " ".join(str(title).split()), str(body).strip(), keys)
        index = len(self.rows) if not at else min(max(at, 1), len(self.rows) + 1) - 1
        self.rows.insert(index, row)
        return index + 1

    def delete(self, number: int) -> DraftStep:
        """Remove a row; the rows that waited for it wait for what it waited for instead,
        so the order it stood for is kept."""
        self.row(number)
        gone = self.rows.pop(number - 1)
        for i, row in enumerate(self.rows):
            if gone.key in row.after:
                inherited = [k for k in row.after if k != gone.key] + list(gone.after)
                self.rows[i] = replace(row, after=tuple(dict.fromkeys(inherited)))
        return gone

    def move(self, number: int, to: int) -> None:
        """Show step `number` as step `to` instead (the others shift)."""
        row = self.row(number)
        self.row(to)
        self.rows.pop(number - 1)
        self.rows.insert(to - 1, row)

    def _put(self, number: int, **change: Any) -> None:
        self.rows[number - 1] = replace(self.row(number), **change)

    # -- checking and saving ---------------------------------------------------------------

    def problems(self) -> list[str]:
        """What keeps this draft from being a valid plan, one line each (empty: valid)."""
        cycle = self._cycle()
        if cycle:
            path = " -> ".join(str(self.number_of(k)) for k in cycle)
            return [f"steps {path} wait for each other (a cycle); remove one of those links"]
        try:
            parse_plan(self._as_arguments(self._ordered()))
        except PlanValidationError as exc:
            return [str(exc)]
        return []

    @property
    def valid(self) -> bool:
        return not self.problems()

    def steps(self) -> tuple[PlanStep, ...]:
        """The plan's steps in an order that respects every edge (PlanValidationError if none)."""
        problems = self.problems()
        if problems:
            raise PlanValidationError(problems[0])
        rows = self._ordered()
        _, steps = parse_plan(self._as_arguments(rows))
        return tuple(steps)

    def ordered_rows(self) -> list[DraftStep]:
        """The rows in the order `steps()` returns them."""
        if self._cycle():
            raise PlanValidationError(self.problems()[0])
        return self._ordered()

    def edits(self) -> list[str]:
        """What the user changed against the model's plan, one line each, by step number."""
        lines: list[str] = []
        if self.goal != self.original_goal:
            lines.append(f"goal changed to {self.goal!r}")
        now = {r.key: r for r in self.rows}
        before = {r.key: r for r in self.original}
        old_number = {r.key: i for i, r in enumerate(self.original, 1)}
        for key, gone in before.items():
            if key not in now:
                lines.append(f"deleted step {old_number[key]} ({gone.title!r})")
        for number, row in enumerate(self.rows, 1):
            old = before.get(row.key)
            if old is None:
                lines.append(f"added step {number} ({row.title!r})")
                continue
            was = f"step {number}"
            if old_number[row.key] != number:
                was += f" (was {old_number[row.key]})"
            if row.title != old.title:
                lines.append(f"{was}: title changed to {row.title!r}")
            if row.body != old.body:
                lines.append(f"{was}: description changed")
            if set(row.after) != set(old.after):
                waits = ", ".join(str(self.number_of(k)) for k in row.after) or "nothing"
                lines.append(f"{was}: now waits for {waits}")
        if [r.key for r in self.rows if r.key in before] != [
            r.key for r in self.original if r.key in now
        ]:
            lines.append("steps reordered")
        return lines

    def text(self) -> str:
        """The draft as plan text, rows in the user's order, then what keeps it from being valid."""
        ids = [r.task_id for r in self.rows]
        index = {r.key: i for i, r in enumerate(self.rows)}
        steps = [
            PlanStep(r.title, r.body, tuple(index[k] for k in r.after if k in index))
            for r in self.rows
        ]
        problems = "\n".join(f"problem: {p}" for p in self.problems())
        return format_plan(self.goal, steps, ids if all(ids) else None, problems)

    @property
    def changed(self) -> bool:
        return bool(self.edits())

    def _ordered(self) -> list[DraftStep]:
        """The rows sorted so each comes after what it waits for, user order kept otherwise."""
        position = {r.key: i for i, r in enumerate(self.rows)}
        waiting = {r.key: {k for k in r.after if k in position} for r in self.rows}
        dependents: dict[int, list[int]] = {k: [] for k in position}
        for key, needs in waiting.items():
            for need in needs:
                dependents[need].append(key)
        ready = [position[k] for k, needs in waiting.items() if not needs]
        heapq.heapify(ready)
        order: list[DraftStep] = []
        while ready:
            row = self.rows[heapq.heappop(ready)]
            order.append(row)
            for dependent in dependents[row.key]:
                waiting[dependent].discard(row.key)
                if not waiting[dependent]:
                    heapq.heappush(ready, position[dependent])
        return order

    def _cycle(self) -> list[int]:
        """One cycle of keys (first key repeated at the end), or [] when there is none."""
        known = {r.key for r in self.rows}
        edges = {r.key: [k for k in r.after if k in known] for r in self.rows}
        state: dict[int, int] = {}  # 1: on the path, 2: finished
        for start in edges:
            if state.get(start):
                continue
            path: list[int] = [start]
            stack = [iter(edges[start])]
            state[start] = 1
            while stack:
                nxt = next(stack[-1], None)
                if nxt is None:
                    state[path.pop()] = 2
                    stack.pop()
                elif state.get(nxt) == 1:
                    return [*path[path.index(nxt) :], nxt]
                elif not state.get(nxt):
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append(iter(edges[nxt]))
        return []

    def _as_arguments(self, rows: Sequence[DraftStep]) -> dict[str, Any]:
        index = {r.key: i for i, r in enumerate(rows)}
        return {
            "goal": self.goal,
            "steps": [
                {
                    "title": r.title,
                    "body": r.body,
                    "after": sorted(index[k] for k in r.after if k in index),
                }
                for r in rows
            ],
        }


def _row_dict(row: DraftStep) -> dict[str, Any]:
    return {
        "key": row.key,
        "title": row.title,
        "body": row.body,
        "after": list(row.after),
        "task_id": row.task_id,
    }


def _row(data: Any) -> DraftStep:
    after = tuple(int(k) for k in data.get("after", ()))
    return DraftStep(
        int(data["key"]),
        str(data["title"]),
        str(data.get("body", "")),
        after,
        str(data.get("task_id", "")),
    )
