"""Inbox requests as the agent reads them: typed rows parsed from a task server's JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ANSWER_POLL = 0.5
"""Seconds between two looks at a request whose answer is awaited (a bounded rate)."""


@dataclass(frozen=True)
class InboxRequest:
    """One request of a task store's inbox: what waits on whom, and its answer if any."""

    id: str
    kind: str
    what: str
    asker: str
    state: str  # open, answered, expired (unanswered in time: denied)
    goal: str = ""
    step: str = ""
    created_at: str = ""
    deadline: str = ""
    answer: str = ""  # allow, deny, stop, raise:<amount>; '' while open
    answered_by: str = ""
    answered_at: str = ""

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> InboxRequest:
        """A request from one entry of the inbox's JSON (missing fields empty)."""
        return cls(**{name: str(data.get(name) or "") for name in _FIELDS})

    @property
    def open(self) -> bool:
        """Still waiting on an answer."""
        return self.state == "open"

    @property
    def allowed(self) -> bool:
        """Answered allow; anything else (denied, stopped, unanswered, expired) is not."""
        return self.state == "answered" and self.answer == "allow"


_FIELDS = tuple(InboxRequest.__dataclass_fields__)


def inbox_page(text: str) -> tuple[list[InboxRequest], str]:
    """One page of the inbox's JSON: its requests and its `next` cursor ('' at the end);
    ValueError when the text is no such page."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list):
        raise ValueError("the inbox answered no {requests} page")
    rows = [InboxRequest.of(r) for r in data["requests"] if isinstance(r, dict) and r.get("id")]
    cursor = data.get("next")
    return rows, cursor if isinstance(cursor, str) else ""
