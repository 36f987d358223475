"""TaskClient's inbox: asks, lists, answers and waits on a real ollie-tasks process; a
server without the inbox is told apart by TaskCaps.inbox."""

from __future__ import annotations

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.planning import TaskCallError
from ollie_nb.tasks import open_store
from ollie_nb.tasks._inbox import Inbox
from tests.support.agents import tasks_agent
from tests.support.waits import until

pytestmark = [pytest.mark.slow, pytest.mark.anyio]  # a real ollie-tasks process each


async def test_a_request_asked_is_answered_elsewhere_and_its_waiter_sees_the_answer(
    make_core, tmp_path
):
    db = tmp_path / "tasks.db"
    client = (await make_core(agent=tasks_agent(db))).servers.task_client
    assert client.caps.inbox
    request = await client.ask("approval", "fetch url", "w1", timeout=60)
    [row] = await client.inbox()
    assert (row.id, row.kind, row.asker, row.open, row.allowed) == (
        request,
        "approval",
        "w1",
        True,
        False,
    )
    with open_store(db) as store:  # another process's answer: straight into the file
        Inbox(store).answer(request, "allow", "ann")
    answered = await client.wait_answer(request, timeout=10, poll=0.05)
    assert answered is not None and answered.allowed and answered.answered_by == "ann"
    with pytest.raises(TaskCallError, match="answered already by ann"):
        await client.answer(request, "deny", by="bob")


async def test_waiting_ends_at_the_timeout_with_the_request_still_open(make_core, tmp_path):
    client = (await make_core(agent=tasks_agent(tmp_path / "tasks.db"))).servers.task_client
    request = await client.ask("cap", "plan 1 reached its cap", "w1", timeout=60)
    waited = await client.wait_answer(request, timeout=0.3, poll=0.05)
    assert waited is not None and waited.open and not waited.allowed
    assert await client.wait_answer("q-none00", timeout=1) is None


async def test_many_requests_are_read_page_after_page(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        made = [Inbox(store).ask("approval", f"call {i}", "w1") for i in range(130)]
    client = (await make_core(agent=tasks_agent(db))).servers.task_client
    assert [r.id for r in await client.inbox()] == made


async def test_a_server_without_the_inbox_has_no_inbox_cap(make_core, fake_task_server):
    core = await make_core(agent=AgentConfig.from_dict({"mcpServers": fake_task_server()}))
    await until(lambda: core.servers.task_client is not None, what="the task server wired")
    client = core.servers.task_client
    assert not client.caps.inbox
    with pytest.raises(TaskCallError, match="has no inbox"):
        await client.ask("approval", "x", "w1", timeout=5)
