"""The step prompt and the queue item that carries it: a step is handed over as an object.

A plan step reaches an agent as a `QueuedPrompt` whose `step` (a `StepRef`) says which
plan and step it is; the code that queues, works or shows it reads that, never the text.
The text (`step_prompt`) is what the model reads: its first line is
`Step k of N [ID]: title` (queue plans) or `Step k of N [task ID]: title` (task-server
plans, so the model knows to mark the task done with `task_update`). `read_step` reads
that line back only where text truly comes from outside: a model reading a message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from ollie_nb.planning._types import PlanKind, PlanRecord, PlanStep

_HEAD = re.compile(r"^Step (\d+) of (\d+) \[(task )?([^\]\s]+)\]: ?(.*)$", re.MULTILINE)


class Origin(Enum):
    """Who queued a prompt."""

    USER = "user"  # typed by the user (or a script)
    PLAN = "plan"  # a step of a queue plan (the prompt-queue fallback)
    WATCH = "watch"  # a task-server step the watch found ready or assigned
    SUBAGENT = "subagent"  # a sub-agent's completion note
    CONTINUE = "continue"  # go on after a turn stopped at maxSteps
    INJECTED = "injected"  # told to the agent while it was idle: worked first
    REVIEW = "review"  # the user approved or sent back a plan held for review


@dataclass(frozen=True)
class StepRef:
    """Which step of which plan a prompt hands over."""

    plan: int  # the plan's number in the session
    index: int  # 0-based
    total: int
    step_id: str  # the plan's id for it: `q2`, or the task id
    kind: PlanKind  # "queue" or "tasks"
    title: str = ""
    goal_id: str = ""  # a task-server plan's goal task ('' for a queue plan)
    plan_ids: tuple[str, ...] = ()  # the ids of every step of its plan

    @property
    def number(self) -> int:
        """1-based, as the prompt and the user say it."""
        return self.index + 1

    @property
    def task_id(self) -> str | None:
        """The task-server id of the step (None for a queue plan's step)."""
        return self.step_id if self.kind == "tasks" else None

    @property
    def label(self) -> str:
        """The step's one-line label: `Step 2 of 5 [task t-1]: title`."""
        tag = f"task {self.step_id}" if self.kind == "tasks" else self.step_id
        return f"Step {self.number} of {self.total} [{tag}]: {self.title}"


@dataclass(frozen=True)
class QueuedPrompt:
    """One item of an agent's prompt queue: the text, where it came from, the step it works."""

    text: str
    origin: Origin = Origin.USER
    step: StepRef | None = None


def step_prompt(
    steps: Sequence[PlanStep],
    index: int,
    ids: Sequence[str],
    *,
    kind: PlanKind,
    goal: str = "",
    note: str = "",
) -> str:
    """The prompt for step `index` (0-based) of a plan whose step ids are `ids`.

    `goal` is prepended (`Goal: ...` and a blank line) when given; a queue plan's
    dependencies are listed as `(after: q1, q2)` (a task server tracks them itself);
    `note` ends the prompt (e.g. why the step is ready).
    """
    step = steps[index]
    tag = f"task {ids[index]}" if kind == "tasks" else ids[index]
    lines = [f"Step {index + 1} of {len(steps)} [{tag}]: {step.title}"]
    if step.body:
        lines.append(step.body)
    if step.after and kind == "queue":
        lines.append("(after: " + ", ".join(ids[j] for j in step.after) + ")")
    if note:
        lines.append(note)
    text = "\n".join(lines)
    return f"Goal: {goal}\n\n{text}" if goal else text


def step_item(
    record: PlanRecord, index: int, origin: Origin, *, goal: str = "", note: str = ""
) -> QueuedPrompt:
    """Step `index` of a plan as a queue item: its prompt and its StepRef."""
    kind: PlanKind = "tasks" if record.kind == "tasks" else "queue"
    text = step_prompt(record.steps, index, record.ids, kind=kind, goal=goal, note=note)
    ref = StepRef(
        record.number,
        index,
        len(record.steps),
        record.ids[index],
        kind,
        record.steps[index].title,
        record.goal_id,
        tuple(record.ids),
    )
    return QueuedPrompt(text, origin, ref)


@dataclass(frozen=True)
class StepHeading:
    """What a step prompt's first line says, read back from text a model was given."""

    number: int  # 1-based
    total: int
    step_id: str
    kind: PlanKind
    title: str


def read_step(prompt: str) -> StepHeading | None:
    """The step line of a prompt written by `step_prompt`, or None for any other text.

    Only for text that comes from outside the code that queued it (a model reading
    its messages); queued work carries its `StepRef`.
    """
    match = _HEAD.search(prompt)
    if match is None:
        return None
    number, total, task, step_id, title = match.groups()
    kind: PlanKind = "tasks" if task else "queue"
    return StepHeading(int(number), int(total), step_id, kind, title.strip())
