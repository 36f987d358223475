"""Every fixed text ollie_nb writes for the model, in one place, so its voice stays one.

The lowest layer holds it, so the planning, tools and core layers all may import it. A
plan's own text is formatted in `_text.py` and a step's prompt in `_steps.py`, where the
code that reads them back lives too; review prompts stay with their reader in `_review.py`.
"""

from __future__ import annotations

from ollie_nb.planning._convention import TASK_LIST, TASK_UPDATE

# -- the turn ----------------------------------------------------------------------------

CONTINUE_PROMPT = (
    "Continue the work you were doing when the turn stopped at the step limit (maxSteps)."
)
INTERRUPTED_NOTE = "[interrupted by the user]"
CANCELLED_RESULT = "error: cancelled: the user interrupted the turn before this call finished"

# -- plans as the backends save them -----------------------------------------------------

NO_BACKEND = (
    "No plan backend is configured; this plan lives in context only. "
    "Work the steps yourself now, in order."
)
TASKS_COMMITTED = (
    "Plan saved on {label}: goal {goal_id} with {n} step tasks (parent = goal, blockers = "
    f"after). Tasks committed. Use {TASK_LIST} to see ready steps; when you finish a step, "
    f"mark it done with {TASK_UPDATE} (its id, status done) before you start the next."
)
QUEUED_MESSAGE = (
    "Plan queued ({n} steps). Stop here — do not execute the steps now. The queue will "
    "re-enter you with each step in order, one prompt per step; work only the step each "
    "prompt gives you."
)
HELD_MESSAGE = (
    "Plan {n} awaits the user's review. Stop here and wait: do not start on the steps; "
    "you will be told when the user approves, changes or discards it."
)

# -- the plan reminder -------------------------------------------------------------------

REMINDER_HEAD = "[plan reminder: your current plan]"
REMINDER_TAIL = (
    "Keep this plan current: mark steps done as you finish them, and revise it if your "
    "approach has changed. Continue."
)

# -- the watch: why a step was queued, and what others did meanwhile ---------------------

READY_NOTE = "(ready now: every step it waits for is done; plan: {goal})"
ASSIGNED_NOTE = "(assigned to you, {name}; plan: {goal})"
NOTES_HEADER = "\n\n[task events since your last turn]\n"
