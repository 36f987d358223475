"""The start's warnings never show a secret: at the start, at %ollie agent, at %ollie mcp.

A failing agentSpawn hook and an MCP server that fails to connect, each naming the
API key (as a curl header in an agent file might, or a server's stderr); the kernel
has the key in its environment, so the redactor knows it. The agent given
before `%load_ext` starts with the first command, which shows the start's warnings.
"""

from __future__ import annotations

import json

import pytest

from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel

KEY = "sk-test-spawn-0123456789abcdef"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("spawn-warnings")
    agent = base / "leaky.json"
    hook = f"echo 'refused key {KEY}' >&2; exit 3"
    server = {"command": "sh", "args": ["-c", f"echo 'refused key {KEY}' >&2; exit 1"]}
    agent.write_text(json.dumps({"hooks": {"agentSpawn": [hook]}, "mcpServers": {"bad": server}}))
    k = Kernel(str(base), {**kernel_env(base), "OPENAI_API_KEY": KEY})
    k.agent = agent
    setup = f"get_ipython().config.OllieMagics.agent = {str(agent)!r}"
    for cell in (setup, "%load_ext ollie_nb"):
        assert k.run(cell).error is None
    k.first = k.run("%ollie agent")  # the agent starts: its start's warnings are shown
    yield k
    k.shutdown()


WARNING = "⚠ agentSpawn hook exited 3: refused key *** (echo 'refused key ***' >&2; exit 3)"


SERVER = (
    "⚠ MCP server bad (command sh): MCPError: Connection closed (server stderr: refused key ***)"
)


def _warnings(run) -> list[str]:
    """The hook's warning, and the start of the server's (which goes on with advice)."""
    lines = run.text().splitlines()
    hook = [line for line in lines if "agentSpawn hook exited 3" in line]
    return hook + [line[: len(SERVER)] for line in lines if line.startswith("⚠ MCP server bad")]


def test_at_the_start_the_hook_warning_is_redacted(kernel):
    first = kernel.first
    assert first.error is None, first.error
    assert KEY not in first.text() + first.stderr()
    assert _warnings(first) == [WARNING, SERVER]


@pytest.mark.parametrize("command", ["%ollie agent {agent}", "%ollie mcp"])
def test_ollie_agent_and_mcp_show_the_hook_warning_redacted(kernel, command):
    run = kernel.run(command.format(agent=kernel.agent))
    assert run.error is None, run.error
    assert KEY not in run.text() + run.stderr()
    assert _warnings(run) == [WARNING, SERVER]
