"""The inbox's tools are never trusted implicitly: a model that could answer its own request
would approve itself, so its `task_answer` (and `task_ask`) asks like any untrusted tool."""

from __future__ import annotations

import pytest

from ollie_nb.core._routing import TrustGate
from ollie_nb.planning import TASK_TOOLS


@pytest.mark.parametrize("tool", ["task_answer", "task_ask", "task_inbox"])
def test_the_inbox_tools_of_the_task_server_ask_first(tool: str) -> None:
    gate = TrustGate(None, None, lambda server: None, task_server="tasks")
    assert tool not in TASK_TOOLS
    assert gate.trusts(tool, "tasks") is False
