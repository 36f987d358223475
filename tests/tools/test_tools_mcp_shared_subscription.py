"""Two streams of one resource on one 2025-protocol session: the first to close leaves the
session subscribed for the other (a short wait for an inbox answer beside the watch)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from ollie_nb.tools import McpServer

TASKS = [sys.executable, "-m", "ollie_nb.tasks", "serve", "--db"]


@pytest.mark.slow
@pytest.mark.anyio
async def test_closing_one_of_two_streams_keeps_the_other_subscribed(tmp_path):
    db = str(tmp_path / "tasks.db")
    watcher = McpServer("tasks", command=TASKS[0], args=[*TASKS[1:], db], mode="legacy")
    writer = McpServer("writer", command=TASKS[0], args=[*TASKS[1:], db])
    try:
        await watcher.connect()
        async with watcher.resource_updates("tasks://events") as kept:
            async with watcher.resource_updates("tasks://events") as brief:
                assert kept is not None and brief is not None
            created = await writer.call_tool("task_create", {"title": "Elsewhere"})
            assert not created.is_error
            signal = await asyncio.wait_for(kept.__anext__(), 10)
        assert str(signal.uri) == "tasks://events"
    finally:
        await writer.aclose()
        await watcher.aclose()
