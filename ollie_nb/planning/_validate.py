"""Turn raw `reasoning_plan` arguments into a goal and PlanSteps, or an error the model can act on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ollie_nb.errors import OllieError
from ollie_nb.planning._types import PlanStep

MAX_STEPS = 1000
MAX_GOAL_CHARS = 2000
MAX_TITLE_CHARS = 500
MAX_BODY_CHARS = 8000
MAX_TOTAL_CHARS = 1_000_000
# A step waits for the few steps whose results it needs; real plans list one to five.
# Dense `after` lists cost the drawing quadratic work (41 steps each after all earlier
# ones, 820 links, kept dot busy for 57 s) and say nothing a chain does not. The plan
# limit is 3 links per step on average at MAX_STEPS (tests/reliability's 1,000-step
# load plan has 1,021).
MAX_AFTER_PER_STEP = 20
MAX_AFTER_TOTAL = 3000
_DIRECT_ONLY = (
    "list only the steps it directly needs: a step after step 3 already waits for "
    "everything step 3 waits for"
)


class PlanValidationError(OllieError):
    """The plan arguments are malformed; the message says what to fix, naming the step."""


def parse_plan(args: Mapping[str, Any]) -> tuple[str, list[PlanStep]]:
    """Validate `{"goal": str, "steps": [{"title", "body", "after"}]}` into (goal, steps)."""
    if not isinstance(args, Mapping):
        raise PlanValidationError("arguments must be an object with 'goal' and 'steps'")
    goal = args.get("goal")
    if goal is None or (isinstance(goal, str) and not goal.strip()):
        raise PlanValidationError("'goal' is required: one sentence saying what the plan achieves")
    if not isinstance(goal, str):
        raise PlanValidationError(f"'goal' must be a string, got {_kind(goal)}")
    goal = goal.strip()
    if len(goal) > MAX_GOAL_CHARS:
        raise PlanValidationError(
            f"'goal' is {len(goal)} characters; keep it under {MAX_GOAL_CHARS} "
            "and put detail in step bodies"
        )

    raw_steps = args.get("steps")
    if raw_steps is None:
        raise PlanValidationError("'steps' is required: a list of {title, body, after} objects")
    if not isinstance(raw_steps, list):
        raise PlanValidationError(f"'steps' must be a list, got {_kind(raw_steps)}")
    if not raw_steps:
        raise PlanValidationError("'steps' is empty: a plan needs at least one step")
    if len(raw_steps) > MAX_STEPS:
        raise PlanValidationError(
            f"the plan has {len(raw_steps)} steps; the limit is {MAX_STEPS}. "
            "Plan at a coarser level and refine later steps when you reach them"
        )

    steps = [_parse_step(i, raw) for i, raw in enumerate(raw_steps)]
    links = sum(len(s.after) for s in steps)
    if links > MAX_AFTER_TOTAL:
        raise PlanValidationError(
            f"the plan has {links} 'after' links in all; the limit is {MAX_AFTER_TOTAL}: "
            + _DIRECT_ONLY
        )
    total = len(goal) + sum(len(s.title) + len(s.body) for s in steps)
    if total > MAX_TOTAL_CHARS:
        raise PlanValidationError(
            f"the plan holds {total} characters of text; the limit is {MAX_TOTAL_CHARS}"
        )
    return goal, steps


def _parse_step(index: int, raw: Any) -> PlanStep:
    where = f"step {index + 1}"
    if isinstance(raw, str):  # a bare title is a common, harmless shorthand
        raw = {"title": raw}
    if not isinstance(raw, Mapping):
        raise PlanValidationError(
            f"{where} must be an object with 'title', 'body', 'after'; got {_kind(raw)}"
        )
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        got = (
            "missing" if title is None else _kind(title) if not isinstance(title, str) else "empty"
        )
        raise PlanValidationError(f"{where}: 'title' is required ({got})")
    title = " ".join(title.split())
    if len(title) > MAX_TITLE_CHARS:
        raise PlanValidationError(
            f"{where}: 'title' is {len(title)} characters; keep it under {MAX_TITLE_CHARS} "
            "and move detail to 'body'"
        )
    body = raw.get("body", "")
    if body is None:
        body = ""
    if not isinstance(body, str):
        raise PlanValidationError(f"{where}: 'body' must be a string, got {_kind(body)}")
    body = body.strip()
    if len(body) > MAX_BODY_CHARS:
        raise PlanValidationError(
            f"{where}: 'body' is {len(body)} characters; the limit is {MAX_BODY_CHARS}"
        )
    return PlanStep(title=title, body=body, after=_parse_after(index, raw.get("after")))


def _parse_after(index: int, raw: Any) -> tuple[int, ...]:
    where = f"step {index + 1}"
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise PlanValidationError(
            f"{where}: 'after' must be a list of 0-based indexes of earlier steps, got {_kind(raw)}"
        )
    seen: dict[int, None] = {}
    for entry in raw:
        given = _short(entry)  # as the model wrote it: 1e300 stays 1e+300, not 301 digits
        if isinstance(entry, bool) or not isinstance(entry, int):
            if isinstance(entry, float) and entry.is_integer():
                entry = int(entry)
            else:
                raise PlanValidationError(
                    f"{where}: 'after' entries must be integers (0-based step indexes), got {given}"
                )
        if entry == index:
            raise PlanValidationError(f"{where}: 'after' refers to the step itself ({entry})")
        if entry < 0:
            raise PlanValidationError(f"{where}: 'after' index {given} is negative")
        if entry > index:
            raise PlanValidationError(
                f"{where}: 'after' index {given} is not an earlier step; a step may only "
                f"wait for steps before it (0 to {index - 1})"
                if index
                else f"{where}: the first step cannot wait for other steps (got {given})"
            )
        seen[entry] = None
    if len(seen) > MAX_AFTER_PER_STEP:
        raise PlanValidationError(
            f"{where}: 'after' lists {len(seen)} steps; the limit is {MAX_AFTER_PER_STEP} "
            "per step: " + _DIRECT_ONLY
        )
    return tuple(seen)


def _short(value: Any, limit: int = 24) -> str:
    """`repr(value)`, cut to `limit` characters: an error line stays one readable line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
