"""`%ollie tools` and `%ollie mcp` in a real kernel name a tool a server lists but the model is
not offered (server-everything's task-only `simulate-research-query`), and say why."""

from __future__ import annotations

import json

import pytest

from ollie_nb.tools._mcp import TASK_REQUIRED
from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.npm_servers import server_everything


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    command = server_everything()
    base = tmp_path_factory.mktemp("ollie-everything")
    agents = base / "config" / "agents"
    agents.mkdir(parents=True)
    server = {"command": command[0], "args": command[1:], "timeout": 30.0}
    (agents / "everything.json").write_text(json.dumps({"mcpServers": {"everything": server}}))
    k = Kernel(str(base), kernel_env(base))
    assert k.run("%load_ext ollie_nb").error is None
    assert k.run("%ollie agent everything", timeout=120).error is None
    yield k
    k.shutdown()


def test_tools_lists_the_task_only_tool_as_not_offered(kernel):
    lines = kernel.run("%ollie tools").text().splitlines()
    (withheld,) = [line for line in lines if "simulate-research-query" in line]
    assert "everything" in withheld and f"not offered: {TASK_REQUIRED}" in withheld
    assert any("get-tiny-image" in line and "not offered" not in line for line in lines)


def test_mcp_warns_about_it(kernel):
    text = kernel.run("%ollie mcp").text()
    assert f"tool 'simulate-research-query' is not offered: {TASK_REQUIRED}" in text
