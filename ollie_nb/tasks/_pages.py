"""How large one answer of the task tools may be: pages of events and tasks, a task's notes.

Every read a client makes of a shared store stays far under a client's usual
100,000-character result cap, however large the tasks, notes and events others wrote.
"""

from __future__ import annotations

import dataclasses
import json

from mcp.server.mcpserver.exceptions import ToolError

from ollie_nb.tasks._render import EXTRA_FIELDS, LIST_FIELDS
from ollie_nb.tasks._store import Task

PAGE_CHARS = 50_000
"""About how many characters of JSON one `task_events` or `task_list` page holds.

Half a client's usual 100,000-character result cap: however large the events (a 16 KiB
note each), a page always reaches a client whole and parses; a cursor reads on.
"""

NOTES_SHOWN = 20
"""How many of a task's newest notes `task_read` returns; `notes_before` pages back."""

NOTES_CHARS = 24_000
"""About how many characters of notes `task_read` returns (at least one note)."""

REFS_SHOWN = 100
"""How many blockers, dependents and children (each) `task_read` lists."""

_REF_KINDS = ("blockers", "dependents", "children")


def task_json(task: Task) -> str:
    """`task` as JSON with at most REFS_SHOWN neighbours of each kind, and `<kind>_total`."""
    document = task.to_dict()
    for kind in _REF_KINDS:
        document[f"{kind}_total"] = len(document[kind])
        document[kind] = document[kind][:REFS_SHOWN]
    return json.dumps(document, ensure_ascii=False)


def list_fields(fields: tuple[str, ...]) -> tuple[str, ...]:
    """The JSON fields asked for (all when none), or a ToolError naming the bad one."""
    for field in fields:
        if field not in LIST_FIELDS and field not in EXTRA_FIELDS:
            known = ", ".join((*LIST_FIELDS, *EXTRA_FIELDS))
            raise ToolError(f"bad field {field!r}: use some of {known}")
    return tuple(fields) or LIST_FIELDS


def list_start(cursor: str) -> int:
    """The start index a `next` value of task_list stands for."""
    if not cursor.strip():
        return 0
    if not cursor.strip().isdigit():
        raise ToolError(f"bad cursor {cursor!r}: pass the next of the previous page")
    return int(cursor)


def newest_notes(task: Task) -> Task:
    """`task` with only its newest notes that fit in NOTES_CHARS (at least one)."""
    kept = 0
    size = 0
    for note in reversed(task.notes):
        size += len(note.text) + len(note.time) + 4
        if kept and size > NOTES_CHARS:
            break
        kept += 1
    if kept == len(task.notes):
        return task
    dropped = len(task.notes) - kept
    return dataclasses.replace(
        task, notes=task.notes[dropped:], notes_start=task.notes_start + dropped
    )
