"""The first `%ollie` command of a fresh IPython loads the core, not what only some uses need."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.agents import kernel_env

# Loaded on the first use that needs them: a secret-looking text, a notebook tool's call, an
# HTTP date in a retry, a hand-written tool-call id, tracing turned on.
LATER = ("detect_secrets", "pydantic", "email", "importlib.metadata", "uuid")


def test_the_first_status_leaves_the_modules_of_later_uses_unloaded(tmp_path):
    code = (
        "%load_ext ollie_nb\n%ollie status\nimport sys\n"
        f"print(sorted(m for m in {LATER!r} if m in sys.modules))\n"
        "print('core' if 'ollie_nb.core' in sys.modules else 'no core')"
    )
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **kernel_env(tmp_path), "IPYTHONDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-2:] == ["[]", "core"], done.stdout[-2000:]


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
