"""The plan reminder: the open plan shown to the model again every `planReminder` tool rounds.

Long sessions bury the plan under tool results; ollie re-surfaces its plan file every
10 rounds. The reminder rides on the newest message (the round's last tool result), so
every earlier message stays the same bytes and the provider's prompt cache keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ollie_nb.planning import PlanRecord, StepState, format_plan
from ollie_nb.planning.prompts import REMINDER_HEAD, REMINDER_TAIL


def plan_reminder_text(record: PlanRecord, statuses: Mapping[str, StepState]) -> str:
    """The reminder for `record` given its steps' states ('' when every step is closed).

    A plan that lives in context only has no statuses: it is taken as open, as ollie
    reminds of its plan file whatever it says.
    """
    if statuses and all(state.is_closed for state in statuses.values()):
        return ""
    ids = list(record.ids) if len(record.ids) == len(record.steps) else None
    states = ""
    if statuses and ids:
        unknown = StepState.UNKNOWN
        words = ", ".join(f"{n + 1} {statuses.get(i, unknown)}" for n, i in enumerate(ids))
        states = f"Step states: {words}."
    plan = format_plan(record.goal, record.steps, ids, states, record.goal_id)
    return f"{REMINDER_HEAD}\n{plan}\n\n{REMINDER_TAIL}"
