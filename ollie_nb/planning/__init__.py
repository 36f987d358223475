"""Plans: value types, step states, queue items, the plan book, the task client and the backends.

The bottom layer: imports nothing else of ollie_nb at run time (graphviz only
when a graph is drawn).
"""

from ollie_nb.planning._adapter import AdaptedPlanBackend, PlanBackendError
from ollie_nb.planning._backends import (
    QueuePlanBackend,
    TaskServerPlanBackend,
    dependency_layers,
    queue_items,
    queue_prompts,
)
from ollie_nb.planning._book import PlanBook, find_plan
from ollie_nb.planning._client import Dispatch, TaskCallError, TaskClient
from ollie_nb.planning._draft import DraftStep, PlanDraft
from ollie_nb.planning._review import (
    ReviewNote,
    approval_prompt,
    discard_note,
    edited_note,
    held_message,
    read_review,
    rejection_prompt,
)
from ollie_nb.planning._spend import Spend
from ollie_nb.planning._state import StepState, read_state, state_label
from ollie_nb.planning._steps import (
    Origin,
    QueuedPrompt,
    StepHeading,
    StepRef,
    read_step,
    step_item,
    step_prompt,
)
from ollie_nb.planning._text import (
    format_plan,
    status_failed,
    status_saved,
    status_wrong_ids,
)
from ollie_nb.planning._types import (
    KindedPlanBackend,
    PlanBackend,
    PlanBackendSetter,
    PlanKind,
    PlanRecord,
    PlanResult,
    PlanStep,
    Review,
    StepStatusReader,
)
from ollie_nb.planning._validate import (
    MAX_AFTER_PER_STEP,
    MAX_AFTER_TOTAL,
    MAX_STEPS,
    PlanValidationError,
    parse_plan,
)
from ollie_nb.planning.graph import (
    DOT_TIMEOUT,
    STATUSES,
    GraphTimeout,
    GraphvizUnavailable,
    PlanView,
    normalise_status,
    plan_graph,
    plan_svg,
    plan_view,
    status_word,
)
from ollie_nb.planning.prompts import HELD_MESSAGE, NO_BACKEND, QUEUED_MESSAGE

__all__ = [
    "DOT_TIMEOUT",
    "HELD_MESSAGE",
    "MAX_AFTER_PER_STEP",
    "MAX_AFTER_TOTAL",
    "MAX_STEPS",
    "NO_BACKEND",
    "QUEUED_MESSAGE",
    "STATUSES",
    "AdaptedPlanBackend",
    "Dispatch",
    "DraftStep",
    "GraphTimeout",
    "GraphvizUnavailable",
    "KindedPlanBackend",
    "Origin",
    "PlanBackend",
    "PlanBackendError",
    "PlanBackendSetter",
    "PlanBook",
    "PlanDraft",
    "PlanKind",
    "PlanRecord",
    "PlanResult",
    "PlanStep",
    "PlanValidationError",
    "PlanView",
    "QueuePlanBackend",
    "QueuedPrompt",
    "Review",
    "ReviewNote",
    "Spend",
    "StepHeading",
    "StepRef",
    "StepState",
    "StepStatusReader",
    "TaskCallError",
    "TaskClient",
    "TaskServerPlanBackend",
    "approval_prompt",
    "dependency_layers",
    "discard_note",
    "edited_note",
    "find_plan",
    "format_plan",
    "held_message",
    "normalise_status",
    "parse_plan",
    "plan_graph",
    "plan_svg",
    "plan_view",
    "queue_items",
    "queue_prompts",
    "read_review",
    "read_state",
    "read_step",
    "rejection_prompt",
    "state_label",
    "status_failed",
    "status_saved",
    "status_word",
    "status_wrong_ids",
    "step_item",
    "step_prompt",
]
