"""The first `%ollie` command loads the agent's start and nothing a later command may need."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.agents import kernel_env

# Loaded on the first use of what needs them: the MCP SDK and its HTTP client, widgets,
# tracing, provider SDKs and code, the graph renderer, the task store, the turn's view, the worker.
NOT_AT_FIRST_COMMAND = (
    "mcp",
    "httpx",
    "httpx2",
    "ipywidgets",
    "opentelemetry",
    "openai",
    "anthropic",
    "graphviz",
    "ollie_nb.tasks",
    "ollie_nb.notebook._render",
    "ollie_nb.notebook._widgets",
    "ollie_nb.core._worker",
    "ollie_nb.llm._anthropic",
    "ollie_nb.llm._ollama",
    "ollie_nb.llm._openai",
    "ollie_nb.llm._remote",
)

FIRST_COMMAND = f"""\
%load_ext ollie_nb
%ollie status
import sys
names = {NOT_AT_FIRST_COMMAND!r}
print(sorted(m for m in sys.modules if m in names or m.startswith(tuple(n + "." for n in names))))
"""


@pytest.mark.slow
def test_the_first_status_loads_no_sdk_widget_or_task_store(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", "-c", FIRST_COMMAND],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **kernel_env(tmp_path), "IPYTHONDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert "chat backend offline" in done.stdout  # the agent started
    assert lines[-1] == "[]"
