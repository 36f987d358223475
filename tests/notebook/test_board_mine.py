"""`%ollie board --mine` alone: over HTTP the user the store knows this kernel's token by
(task_whoami), over stdio this kernel's agent's claims; `--mine NAME` takes NAME.

A real `ollie-tasks serve --http --tokens FILE` process and a real stdio one (slow).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.notebook.commands.board import mine_holder
from ollie_nb.planning._board import BoardFilter, ClaimLog, board_of
from ollie_nb.planning._client import LeasePolicy
from tests.support.agents import tasks_agent
from tests.support.tasks_harness import as_user, http_server, ok

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789"
UNNAMED = "shared-token-0123456789"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _claimed_plan(url: str, token: str, name: str) -> str:
    """A goal with one step that the token's user `name` claims: the goal's id."""
    title = f"{name}'s plan"
    async with as_user(url, token) as user:
        goal = await ok(user, "task_create", title=title)
        step = await ok(user, "task_create", title=f"{title}: the step", parent=goal)
        await ok(user, "task_claim", id=step, assignee=name, lease=300)
    return goal


async def test_mine_over_http_is_the_tokens_user(make_core, tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text(f"alice {ALICE}\nbob {BOB}\n")
    (tmp_path / "token").write_text(UNNAMED + "\n")
    options = ("--tokens", str(users), "--token-file", str(tmp_path / "token"))
    async with http_server(tmp_path / "tasks.db", *options) as url:
        alices = await _claimed_plan(url, ALICE, "alice")
        await _claimed_plan(url, BOB, "bob")
        async with as_user(url, UNNAMED) as shared:
            assert json.loads(await ok(shared, "task_whoami")) == {"user": ""}
        server = {"url": url, "headers": {"Authorization": f"Bearer {ALICE}"}}
        core = await make_core(agent=AgentConfig.from_dict({"mcpServers": {"tasks": server}}))
        assert await mine_holder(core, True) == "alice"
        assert await mine_holder(core, "bob") == "bob"
        assert await mine_holder(core, None) == ""
        client = core.servers.task_client
        log = ClaimLog()
        log.fold(await client.newest(1000))
        plans = board_of(await client.tasks(), log, time.time(), BoardFilter(mine="alice"))
        assert [p.goal.id for p in plans] == [alices]


async def test_mine_over_stdio_is_this_kernels_agent(make_core, tmp_path: Path) -> None:
    core = await make_core(agent=tasks_agent(tmp_path / "tasks.db"))
    client = core.servers.task_client
    assert client.caps.whoami and await client.whoami() == ""
    goal = await client.create(title="Mine")
    step = await client.create(title="Mine: the step", parent=goal)
    await client.claim(step, f"{core.agent_name}@ab12", LeasePolicy(300, True))
    assert await mine_holder(core, True) == core.agent_name
