"""The task-server convention's tool names, defined once (docs/TASK_SERVER.md).

Planning is the bottom layer, so the task client, the core's trust rules, the offline
model (llm) and the prompts can all import these names without crossing a layer.
"""

from __future__ import annotations

from typing import Final

TASK_PREFIX: Final = "task_"  # every tool of the convention starts so
TASK_CREATE: Final = "task_create"
TASK_UPDATE: Final = "task_update"
TASK_CLAIM: Final = "task_claim"
TASK_CLAIM_NEXT: Final = "task_claim_next"  # optional: a worker's next step in one call
TASK_HEARTBEAT: Final = "task_heartbeat"
TASK_READ: Final = "task_read"
TASK_LIST: Final = "task_list"
TASK_EVENTS: Final = "task_events"
TASK_DELETE: Final = "task_delete"
TASK_EDIT: Final = "task_edit"
TASK_DEP: Final = "task_dep"
TASK_REOPEN: Final = "task_reopen"  # optional: reopen a failed step (a person's act: asks)
TASK_ASK: Final = "task_ask"  # ollie-tasks' inbox: open a request that waits on a person
TASK_INBOX: Final = "task_inbox"  # list inbox requests
TASK_ANSWER: Final = "task_answer"  # answer one once (never trusted implicitly)
TASK_WHOAMI: Final = "task_whoami"  # ollie-tasks: the HTTP user the client's token names
APPROVED_LABEL: Final = "approved"  # the goal's label: a plan approved for workers to work
EVENTS_URI: Final = "tasks://events"  # the resource ollie-tasks signals on every change
TASK_TOOLS: Final = frozenset(
    {
        TASK_CREATE,
        TASK_UPDATE,
        TASK_CLAIM,
        TASK_CLAIM_NEXT,
        TASK_HEARTBEAT,
        TASK_READ,
        TASK_LIST,
        TASK_EVENTS,
        TASK_DELETE,
        TASK_EDIT,
        TASK_DEP,
    }
)
"""The convention's own tools: the only ones trusted implicitly, and only on the wired task
server (a `task_upload` of any server, or any server's tools but the task server's, ask)."""
