"""Step statuses out of a task server's answers: its JSON form first, its text lines as the fallback.

`ollie-tasks` answers `task_list` / `task_read` with `format="json"` as JSON (a list of
tasks, or `{"tasks": [...]}`; one task object); third-party servers may ignore the
argument and answer text, which is parsed as before: `id status ...` lines of a listing,
a `status: X` field of one task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

_STATUS_FIELD = re.compile(r"""["']?status["']?\s*[:=]\s*["']?([A-Za-z_-]+)""")


def _json(text: str) -> Any:
    """The JSON value of `text`, or None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def listing_statuses(text: str, wanted: Collection[str]) -> dict[str, str]:
    """Statuses of the `wanted` task ids in a `task_list` answer, JSON or text lines."""
    data = _json(text)
    if isinstance(data, dict):
        data = data.get("tasks")
    if isinstance(data, list):
        return {
            str(task["id"]): task["status"]
            for task in data
            if isinstance(task, dict)
            and str(task.get("id")) in wanted
            and isinstance(task.get("status"), str)
        }
    found: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in wanted:
            found[parts[0]] = parts[1]
    return found


def listing_next(text: str) -> str:
    """The cursor of the page after a JSON `task_list` page (its `next`), or ""."""
    data = _json(text)
    cursor = data.get("next") if isinstance(data, dict) else None
    return cursor if isinstance(cursor, str) else ""


def task_status(text: str) -> str | None:
    """The status in a `task_read` answer: a JSON object's `status`, or a `status:` field."""
    data = _json(text)
    status = data.get("status") if isinstance(data, dict) else None
    if isinstance(status, str):
        return status
    match = _STATUS_FIELD.search(text)
    return match.group(1) if match else None
