"""A watch step whose turn closed it (the server said ok to its `task_update`) is left as
it is without reading it again: the watched chain pays no task_read per step (a real
ollie-tasks subprocess on a real SQLite file)."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.core.test_task_events import PROMPT, done_events
from tests.support.agents import tasks_agent


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_watch_step_its_turn_closed_is_not_read_again(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db))
    await core.submit(PROMPT)
    client = core.servers.task_client
    call, calls = client._call, Counter()  # the one place the client calls a tool

    async def counted_call(tool, args):
        calls[tool] += 1
        return await call(tool, args)

    client._call = counted_call
    await core.watch.start()
    await core.watch.until_idle(timeout=30)
    await core.watch.stop()
    record = core.plans[-1]
    await core.aclose()  # the store is read as the agent left it
    assert done_events(db) == list(record.ids)  # each step once, in plan order
    assert calls["task_read"] == 0, calls  # no read to release a step its turn closed
