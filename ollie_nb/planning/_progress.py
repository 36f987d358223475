"""A claimed step's progress as its holder tells the store with each heartbeat.

ollie-tasks keeps it per task (`task_heartbeat`'s tokens, cost, last_tool; task_list's
`progress` field); the board shows it. The tool name is untrusted text: kept to one short
printable line here, and escaped wherever it is shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ollie_nb.planning._spend import Spend

MAX_TOOL_CHARS = 100  # the longest tool name ollie-tasks keeps


def tool_name(raw: object) -> str:
    """`raw` as one printable line of at most MAX_TOOL_CHARS (a server refuses anything else)."""
    text = "".join(c for c in str(raw) if c.isprintable())
    return text.strip()[:MAX_TOOL_CHARS].strip()


@dataclass(frozen=True)
class StepProgress:
    """Tokens and dollars spent on a claimed step so far, and the last tool it called."""

    spend: Spend
    last_tool: str = ""

    def heartbeat_args(self) -> dict[str, Any]:
        """What `task_heartbeat` takes to keep it, within the bounds the server checks."""
        cost = self.spend.cost if math.isfinite(self.spend.cost) else 0.0
        return {
            "tokens": max(0, int(self.spend.tokens)),
            "cost": max(0.0, cost),
            "last_tool": tool_name(self.last_tool),
        }

    @classmethod
    def of(cls, data: object) -> StepProgress | None:
        """The progress of a listing's `progress` object; None when absent or malformed."""
        if not isinstance(data, Mapping):
            return None
        tokens, cost = data.get("tokens"), data.get("cost")
        if not isinstance(tokens, int) or not isinstance(cost, (int, float)):
            return None
        return cls(Spend(tokens, float(cost)), tool_name(data.get("last_tool") or ""))
