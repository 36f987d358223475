"""`%ollie run --parallel`, `%ollie subagents` and `%ollie stop` in a real kernel (ollie-tasks subprocess)."""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest

from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel
from tests.support.waits import output_until

PLAN = "%%ollie\nShip it\n- Prepare\n- Left (after 1)\n- Middle (after 1)\n- Right (after 1)\n- Join (after 2, 3, 4)"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbpar")
    k = Kernel(str(base), kernel_env(base))
    k.run("%load_ext ollie_nb")
    yield k, base
    k.shutdown()


def test_parallel_run_shows_a_tab_per_child_and_a_deterministic_summary(kernel):
    k, base = kernel
    k.run(f"%ollie agent {tasks_agent_file(base)}")
    assert k.run("%ollie subagents").text() == "sub-agents\n(no sub-agents yet)"
    k.run(PLAN)
    idle = k.run("%ollie run").text()  # the plan is on the task server, not in the queue
    assert idle.startswith(
        "ℹ the queue is empty; plan 1 is saved on the task server: work it with "
    )
    assert "%ollie run --parallel" in idle and "%ollie watch on" in idle and "ollie-work" in idle
    run = k.run("%ollie run --parallel 3")
    assert run.error is None, run.error
    texts = run.texts()
    assert texts[0] == "ollie: parallel run of plan 1"
    summary = texts[-1].splitlines()
    assert summary[0].startswith("plan 1: 5 steps done by sub-agents (")
    assert summary[1].split() == ["step", "title", "worker", "status", "tokens", "cost"]
    assert summary[2].split()[:4] == ["1", "Prepare", "worker1", "done"]
    join = summary[6].split()  # whichever worker was free first
    assert join[:2] == ["5", "Join"] and join[2] in ("worker1", "worker2", "worker3")
    assert join[3] == "done"
    # each step's tokens (the offline model's words) and its $0; the title has their sum
    tokens = [int(row.split()[-2].replace(",", "")) for row in summary[2:7]]
    assert all(n > 0 for n in tokens) and all(r.endswith(" $0.0000") for r in summary[2:7])
    assert summary[0].endswith(f" ({sum(tokens):,} tokens, $0.0000)")
    listed = k.run("%ollie subagents").text().splitlines()
    assert listed[0] == "sub-agents" and len(listed) == 2 + 3  # three workers, reused
    assert listed[2].split()[:2] == ["worker1", "done"]
    # the widget: one tab per child, each child's turn rendered in its own Output
    probe = (
        "from ollie_nb.notebook._parallel_widget import ParallelRunView\n"
        "import gc\nv = [o for o in gc.get_objects() if isinstance(o, ParallelRunView)][-1]\n"
        "print([v.tabs.get_title(i) for i in range(len(v.tabs.children))])\n"
        "print(sorted(p.state for p in v.panes.values()))\n"
        "print(len(v.panes['worker3'].output.outputs) > 0, 'worker3' in v.graph.html())"
    )
    lines = k.run(probe).text().splitlines()
    assert lines[0] == "['worker1', 'worker2', 'worker3']"
    assert lines[1] == "['idle', 'idle', 'idle']"
    assert lines[2] == "True True"


def test_stop_ends_a_background_parallel_run_and_every_child(kernel):
    k, base = kernel
    k.run(f"%ollie agent {tasks_agent_file(base)}")  # its plans go to a task server
    slow = (
        "import asyncio, ollie_nb\nfrom ollie_nb.llm import OfflineBackend\n"
        "from ollie_nb.llm._offline import demo_reply, is_step_prompt\n"
        "async def slow(messages, tools):\n"
        "    if messages[-1].role == 'user' and is_step_prompt(messages[-1].content):\n"
        "        await asyncio.sleep(60)\n"
        "    return demo_reply(messages, tools)\n"
        "ollie_nb.agent().core.set_backend(OfflineBackend(slow))"
    )
    assert k.run(slow).error is None
    k.run("%%ollie\nChores\n- One (independent)\n- Two (independent)\n- Three (independent)")
    latest = k.run("print(len(ollie_nb.agent().plans))").text().strip()  # the kernel is shared
    started = k.run("w = get_ipython().run_line_magic('ollie', 'run --parallel 3 --bg')\nw")
    assert started.text() == f"ollie: parallel run of plan {latest}"
    output_until(k, "%ollie subagents", "running")  # the Stop lands while they run
    assert k.run("%ollie stop").text() == "ℹ stopping the running turn and every sub-agent"
    output_until(k, "print(w.status.value)", "interrupted")
    rows = k.run("%ollie subagents").text()
    assert rows.count("interrupted") == 3 and "running" not in rows
    tabs = k.run("print(sorted(p.state for p in w.panes.values()))").text().strip()
    assert tabs == str(["interrupted"] * 3)  # each tab told by its child's TurnEnded
    assert k.run("%ollie stop").text() == "ℹ nothing is running"


PAIRS = """
import asyncio, ollie_nb
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt
started = []

async def in_pairs(messages, tools):
    # a step's first request waits (bounded) for its partner: steps run two by two
    last = messages[-1]
    if last.role == 'user' and is_step_prompt(last.content):
        started.append(last.content)
        want = min(len(started) + len(started) % 2, 4)
        for _ in range(1000):
            if len(started) >= want:
                break
            await asyncio.sleep(0.02)
        else:
            raise RuntimeError('no partner step started')
    return demo_reply(messages, tools)

ollie_nb.agent().core.set_backend(OfflineBackend(in_pairs))
"""


def test_parallel_without_n_runs_the_agents_max_parallel_at_once(kernel):
    """`%ollie run --parallel` with no N: the agent file's maxParallel (2), not one at a time."""
    k, base = kernel
    db = base / "pairs.db"
    server = {"command": sys.executable, "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)]}
    agent = base / "two-at-once.json"
    agent.write_text(json.dumps({"maxParallel": 2, "mcpServers": {"tasks": server}}))
    assert k.run(f"%ollie agent {agent}").error is None
    assert k.run(PAIRS).error is None
    k.run("%%ollie\nFour chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 5)))
    run = k.run("%ollie run --parallel", timeout=120)
    assert run.error is None, run.error
    assert run.texts()[0].startswith("ollie: parallel run of plan ")
    assert ": 4 steps done by sub-agents (" in run.texts()[-1].splitlines()[0]
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT type, task, payload FROM events ORDER BY seq").fetchall()
    working, most = set(), 0  # steps claimed and not done yet, by the server's event order
    for kind, task, payload in rows:
        if kind == "claimed":
            working.add(task)
            most = max(most, len(working))
        elif kind == "status_changed" and json.loads(payload)["to"] == "done":
            working.discard(task)
    assert most == 2
