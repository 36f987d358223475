"""Plans: value types, step states, queue items, the plan book, the task client and the backends.

The bottom layer: imports nothing else of ollie_nb at run time (graphviz only
when a graph is drawn).
"""

from ollie_nb.planning._adapter import AdaptedPlanBackend, PlanBackendError
from ollie_nb.planning._backends import (
    QUEUED_MESSAGE,
    QueuePlanBackend,
    TaskServerPlanBackend,
    dependency_layers,
    queue_items,
    queue_prompts,
)
from ollie_nb.planning._book import PlanBook, find_plan
from ollie_nb.planning._client import Dispatch, TaskCallError, TaskClient
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
    NO_BACKEND,
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
)

__all__ = [
    "DOT_TIMEOUT",
    "MAX_AFTER_PER_STEP",
    "MAX_AFTER_TOTAL",
    "MAX_STEPS",
    "NO_BACKEND",
    "QUEUED_MESSAGE",
    "STATUSES",
    "AdaptedPlanBackend",
    "Dispatch",
    "GraphTimeout",
    "GraphvizUnavailable",
    "KindedPlanBackend",
    "Origin",
    "PlanBackend",
    "PlanBackendError",
    "PlanBackendSetter",
    "PlanBook",
    "PlanKind",
    "PlanRecord",
    "PlanResult",
    "PlanStep",
    "PlanValidationError",
    "PlanView",
    "QueuePlanBackend",
    "QueuedPrompt",
    "Spend",
    "StepHeading",
    "StepRef",
    "StepState",
    "StepStatusReader",
    "TaskCallError",
    "TaskClient",
    "TaskServerPlanBackend",
    "dependency_layers",
    "find_plan",
    "format_plan",
    "normalise_status",
    "parse_plan",
    "plan_graph",
    "plan_svg",
    "plan_view",
    "queue_items",
    "queue_prompts",
    "read_state",
    "read_step",
    "state_label",
    "status_failed",
    "status_saved",
    "status_wrong_ids",
    "step_item",
    "step_prompt",
]
