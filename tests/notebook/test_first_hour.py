"""What a new user types in the first hour: prose prompts, results with fields, resumed agents,
and a terminal IPython that prints each reply once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel

SCRIPTED = """
from ollie_nb.llm import OfflineBackend

def echo(messages, tools):
    return "you said: " + messages[-1].content

ollie_nb_echo = OfflineBackend(echo)
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("first-hour")
    k = Kernel(str(base), kernel_env(base))
    k.base = base
    assert k.run("%load_ext ollie_nb").error is None
    assert k.run(SCRIPTED).error is None
    assert "backend: offline" in k.run("%ollie backend ollie_nb_echo").text()
    yield k
    k.shutdown()


def last_user_message(kernel) -> str:
    code = "print(repr([m.content for m in ollie_nb.agent().history if m.role == 'user'][-1]))"
    return kernel.run("import ollie_nb\n" + code).text().strip()


@pytest.mark.parametrize(
    ("line", "sent"),
    [
        ("%ollie ask it's fine", "it's fine"),
        ("%ollie ask What is a plan?", "What is a plan?"),
        ('%ollie ask a\\nb and "quotes"', 'a\\nb and "quotes"'),
        ("%ollie ask cost {x} and $y, as typed", "cost {x} and $y, as typed"),
        ("%ollie ask -- --not an option", "--not an option"),
        ("%ollie ask --model offline-planner keep   the   spaces", "keep   the   spaces"),
    ],
)
def test_a_line_prompt_is_prose_after_its_options(kernel, line, sent):
    kernel.run("x, y = 'X', 'Y'")
    run = kernel.run(line)
    assert run.error is None and "Traceback" not in run.stderr(), run.stderr()
    assert "you said: " + sent in run.text()
    assert last_user_message(kernel) == repr(sent)


def test_usage_is_an_object_with_fields(kernel):
    kernel.run("%ollie ask one more")
    out = kernel.run(
        "r = %ollie usage\nprint(type(r.requests).__name__, r.requests > 0, r.input_tokens >= 0)\nr"
    )
    assert out.text().splitlines()[0] == "int True True"
    assert [line for line in out.text().splitlines() if line.startswith("ℹ usage: ")], out.text()


def test_resume_brings_back_the_agent_the_session_used(kernel, tmp_path):
    agent = tasks_agent_file(tmp_path)
    assert "agent: with-tasks" in kernel.run(f"%ollie agent {agent}").text()
    kernel.run("%ollie ask remember this")
    kernel.run("%ollie rename agent-session")
    assert "agent: default" in kernel.run("%ollie agent default").text()
    resumed = kernel.run("%ollie resume agent-session").text()
    assert "resumed " in resumed and "plan" in resumed
    assert "agent: with-tasks (the agent this session used)" in resumed
    assert "tasks" in kernel.run("%ollie mcp").text()
    assert "agent         with-tasks" in kernel.run("%ollie agent").text()


def test_terminal_ipython_prints_each_reply_once(tmp_path):
    script = tmp_path / "session.py"
    script.write_text(
        "ip = get_ipython()\n"
        "ip.run_line_magic('load_ext', 'ollie_nb')\n"
        "ip.run_cell('%%ollie\\nShip it\\n- one\\n- two\\n')\n"
    )
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OLLIE_", "OPENAI", "ANTHROPIC"))
    }
    env.update(kernel_env(tmp_path))
    ipython = Path(sys.executable).parent / "ipython"
    done = subprocess.run(
        [str(ipython), "--no-banner", "--colors=NoColor", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.count("Planned 2 steps for: Ship it.") == 1, out
    assert [line for line in out.splitlines() if line.strip() == "Planned"] == []
    assert json.dumps({"title": "one", "body": "", "after": []}) in out  # the tool block, once
