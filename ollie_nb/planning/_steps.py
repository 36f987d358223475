"""The step prompt: the one text a plan step is handed to the agent as, written and read here only.

Queued plans (the prompt-queue fallback) and task-server plans (the event watcher,
parallel runs) hand each step to the agent as a prompt whose first line is
`Step k of N [ID]: title` (queue plans) or `Step k of N [task ID]: title` (task-server
plans, so the model knows to mark the task done with `task_update`). Every reader
(the core, the offline model, the notebook) uses `read_step`, never its own regex.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ollie_nb.planning._types import PlanKind, PlanStep

_HEAD = re.compile(r"^Step (\d+) of (\d+) \[(task )?([^\]\s]+)\]: ?(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class StepRef:
    """What a step prompt says about its step: position, id and whether a task server holds it."""

    number: int  # 1-based
    total: int
    step_id: str
    kind: PlanKind
    title: str


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


def read_step(prompt: str) -> StepRef | None:
    """The step a prompt written by `step_prompt` hands over, or None for any other prompt."""
    match = _HEAD.search(prompt)
    if match is None:
        return None
    number, total, task, step_id, title = match.groups()
    return StepRef(int(number), int(total), step_id, "tasks" if task else "queue", title.strip())
