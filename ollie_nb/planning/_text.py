"""The one place that formats a plan as text for the model and for people."""

from __future__ import annotations

from collections.abc import Sequence

from ollie_nb.planning._types import PlanStep


def format_plan(
    goal: str,
    steps: Sequence[PlanStep],
    ids: Sequence[str] | None = None,
    status: str = "",
    goal_id: str = "",
) -> str:
    """Goal, numbered steps (with ids when persisted), bodies, `after:` lines, one status line."""
    lines = [f"Plan: {goal}" + (f"  [{goal_id}]" if goal_id else "")]
    use_ids = ids is not None and len(ids) == len(steps)
    for i, step in enumerate(steps):
        tag = f" [{ids[i]}]" if use_ids and ids else ""
        lines.append(f"{i + 1}.{tag} {step.title}")
        lines.extend(f"   {line}" if line else "" for line in step.body.splitlines())
        if step.after:
            refs = ", ".join(_ref(j, ids if use_ids else None) for j in step.after)
            lines.append(f"   after: {refs}")
    if status:
        lines.extend(["", status])
    return "\n".join(lines)


def _ref(index: int, ids: Sequence[str] | None) -> str:
    return f"step {index + 1} ({ids[index]})" if ids else f"step {index + 1}"


def status_saved(where: str, count: int, goal_id: str = "") -> str:
    """Status line for a plan a backend accepted without a message of its own."""
    goal = f", goal {goal_id}" if goal_id else ""
    return f"Plan saved by {where}: {count} steps{goal}."


def status_failed(where: str, reason: str) -> str:
    """Status line for a backend that raised or timed out."""
    return f"warning: {where} failed ({reason}); this plan lives in context only."


def status_wrong_ids(where: str, got: int, want: int) -> str:
    """Status line for a backend whose ids do not match the steps one to one."""
    what = "no ids" if got == 0 else f"{got} ids"
    return f"warning: {where} returned {what} for {want} steps; this plan lives in context only."
