"""Headless workers (`python -m ollie_nb work`): real worker processes on one SQLite store.

Each worker runs its own ollie-tasks server and the offline model (which works a step
prompt by marking its task done); every check reads the store's event log.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ollie_nb.tasks import open_store
from tests.core.test_parallel_plans import claims_and_dones, event_log
from tests.support.agents import kernel_env

ROOT = Path(__file__).resolve().parents[2]


def plan_in_store(db: Path, steps: int) -> tuple[str, list[str]]:
    with open_store(db) as store:
        goal = store.create("Chores")
        return goal, [store.create(f"Chore {i}", parent=goal) for i in range(1, steps + 1)]


def agent_file(tmp: Path, db: Path, lease: float = 10, **extra) -> Path:
    server = {"command": sys.executable, "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)]}
    path = tmp / "worker.json"
    path.write_text(json.dumps({"mcpServers": {"tasks": server}, "claimLease": lease, **extra}))
    return path


def start_worker(tmp: Path, agent: Path, name: str, *args: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "ollie_nb", "work", "--agent", str(agent), "--name", name]
    env = {**os.environ, **kernel_env(tmp / name)}
    return subprocess.Popen(
        [*cmd, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp
    )


def test_two_workers_until_idle_finish_a_plan_each_step_claimed_once_and_exit_0(tmp_path):
    db = tmp_path / "tasks.db"
    _goal, steps = plan_in_store(db, 12)
    with open_store(db) as store:  # held until both workers watch: then both race for them
        for step in steps:
            store.claim(step, "holder", lease=4)
    agent = agent_file(tmp_path, db, hooks={"userPromptSubmit": ["sleep 0.5"]})  # steps overlap
    workers = [
        start_worker(tmp_path, agent, name, "--parallel", "2", "--until-idle")
        for name in ("w1", "w2")
    ]
    outs = [w.communicate(timeout=120) for w in workers]
    for worker, (out, err) in zip(workers, outs):
        assert worker.returncode == 0, err[-2000:]
        assert out.splitlines()[-1].endswith("idle: no step is ready or claimed"), out
    _claims, dones = claims_and_dones(db)
    for step in steps:
        assert len(dones.get(step, [])) == 1, (step, dones)
        by = [p["assignee"] for _, k, t, p in event_log(db) if k == "claimed" and t == step]
        assert by[0] == "holder" and len(by) == 2, by  # the holder's, then one worker's
    workers_of = {p["assignee"].split("@")[0] for _, k, _, p in event_log(db) if k == "claimed"}
    assert workers_of == {"holder", "w1", "w2"}, workers_of  # both workers took steps
    logged = [line for out, _ in outs for line in out.splitlines() if " done: step " in line]
    assert len(logged) == len(steps)  # one line per step worked


def wait_line(proc: subprocess.Popen[str], needle: str, within: float = 60.0) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if needle in line:
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"the worker never said {needle!r}")


def test_sigterm_hands_the_claimed_steps_back(tmp_path):
    db = tmp_path / "tasks.db"
    _goal, steps = plan_in_store(db, 4)
    slow = {"hooks": {"userPromptSubmit": ["sleep 30"]}}  # every step turn waits 30 s first
    worker = start_worker(tmp_path, agent_file(tmp_path, db, **slow), "w1", "--parallel", "2")
    wait_line(worker, "claimed: step 2 ")
    worker.send_signal(signal.SIGTERM)
    out, err = worker.communicate(timeout=30)
    assert worker.returncode == 143, err[-2000:]
    assert "stopped by SIGTERM: claimed steps handed back" in out
    with open_store(db, create=False) as store:
        held = [t for t in store.list(status="in_progress")]
    assert held == []  # nothing left claimed by the stopped worker
    back = [
        t
        for _, k, t, p in event_log(db)
        if k == "status_changed" and p.get("from") == "in_progress" and p.get("to") == "open"
    ]
    assert sorted(back) == sorted(steps[:2]), back  # the two it held, handed back
    _claims, dones = claims_and_dones(db)
    assert len(dones) < len(steps)  # it stopped, not finished the plan


def test_a_worker_at_its_session_cap_hands_back_and_exits_1(tmp_path):
    db = tmp_path / "tasks.db"
    _goal, steps = plan_in_store(db, 6)
    agent = agent_file(tmp_path, db, maxSessionTokens=300)  # about one step of the offline model
    worker = start_worker(tmp_path, agent, "w1", "--until-idle")
    try:
        out, err = worker.communicate(timeout=60)
    finally:
        worker.kill()  # a worker that went on past the cap must not outlive the test
    assert worker.returncode == 1, err[-2000:]
    last = out.splitlines()[-1]
    assert "stopped: the session's token cap 300 is reached: " in last, out
    assert last.endswith("; its claimed steps were handed back")
    with open_store(db) as store:
        states = [store.get(step).status for step in steps]
    assert states.count("done") >= 1 and "in_progress" not in states  # none left claimed
    assert states.count("open") >= 4  # the worker did not go on past the cap
