"""A claimed step's progress as its holder's heartbeat tells it: tokens, cost, last tool.

The holder's own account, kept on the task (schema 6) until the next claim clears it; the
store checks its bounds, never its truth. The tool name is untrusted text: one short line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ollie_nb.tasks._errors import InvalidTaskError

MAX_TOOL_CHARS = 100
"""The longest tool name a heartbeat may report."""
MAX_TOKENS = 10**15
MAX_COST = 1e9  # dollars


class _Rows(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...


@dataclass(frozen=True)
class Progress:
    """Tokens and dollars spent on a claimed step so far, and the last tool it called."""

    tokens: int
    cost: float
    last_tool: str = ""

    def line(self) -> str:
        """As `task_get` shows it: `1234 tokens, $0.0123, last tool bash`."""
        tool = f", last tool {self.last_tool}" if self.last_tool else ""
        return f"{self.tokens} tokens, ${self.cost:.4f}{tool}"


def progress_of(tokens: int, cost: float, last_tool: str) -> Progress:
    """A heartbeat's progress after its bounds are checked (InvalidTaskError when not)."""
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= MAX_TOKENS:
        raise InvalidTaskError(f"tokens must be a whole number from 0 to {MAX_TOKENS}")
    if not isinstance(cost, (int, float)) or not math.isfinite(cost) or not 0 <= cost <= MAX_COST:
        raise InvalidTaskError(f"cost must be a number of dollars from 0 to {MAX_COST:g}")
    tool = last_tool.strip() if isinstance(last_tool, str) else ""
    if len(tool) > MAX_TOOL_CHARS or not tool.isprintable():
        raise InvalidTaskError(
            f"last_tool must be one printable line of at most {MAX_TOOL_CHARS} characters"
        )
    return Progress(tokens, float(cost), tool)


def stored(row: Sequence[Any]) -> Progress | None:
    """The progress of a (tokens, cost, tool) row; None when no heartbeat told any."""
    tokens, cost, tool = row
    return None if tokens is None else Progress(int(tokens), float(cost or 0.0), tool or "")


PROGRESS_COLUMNS = "progress_tokens, progress_cost, progress_tool"
CLEARED = "progress_tokens = NULL, progress_cost = NULL, progress_tool = NULL"
"""What a new claim sets: its progress starts untold."""


def progress_by_task(conn: _Rows, condition: str, params: Sequence[Any]) -> dict[str, Progress]:
    """The progress of the tasks a listing's `condition` takes that have one, by id."""
    sql = (
        f"SELECT t.id, {PROGRESS_COLUMNS} FROM tasks t"
        + (condition + " AND" if condition else " WHERE")
        + " t.progress_tokens IS NOT NULL"
    )
    found: dict[str, Progress] = {}
    for row in conn.execute(sql, params):
        progress = stored(row[1:])
        if progress is not None:
            found[row[0]] = progress
    return found
