"""A parallel run in a real kernel that is killed mid-run, resumed in the restarted kernel.

The kernel works a plan with `%ollie run --parallel 2 --bg` on a shared ollie-tasks
SQLite store; it is killed (restarted at once) while it holds claims. In the new kernel
`%ollie resume` and `%ollie run --parallel 2` finish the plan: the store's event log
shows every step done exactly once, and no step worked twice.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ollie_nb.tasks import open_store
from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]
LEASE = 2.0
STEP_TURN = 1.5  # s each step's turn takes (a hook sleeps first)
FOUR = "%%ollie\nFour chores\n" + "\n".join(f"- Chore {i} (independent)" for i in range(1, 5))


def agent_file(folder: Path, db: Path) -> Path:
    server = {
        "command": sys.executable,
        "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
        "env": {"PYTHONPATH": os.environ.get("PYTHONPATH") or str(ROOT)},  # this tree's server
    }
    agent = {
        "mcpServers": {"tasks": server},
        "claimLease": LEASE,
        "hooks": {"userPromptSubmit": [f"sleep {STEP_TURN}"]},
    }
    path = folder / "durable.json"
    path.write_text(json.dumps(agent))
    return path


def log_of(db: Path) -> list[tuple[str, str, dict]]:
    with open_store(db, create=False) as store:
        events, since = [], 0
        while page := store.events(since, 1000):
            events.extend((e.type, e.task, e.payload) for e in page)
            since = page[-1].seq
    return events


def claims_and_dones(db: Path) -> tuple[dict[str, int], dict[str, int]]:
    claims: dict[str, int] = {}
    dones: dict[str, int] = {}
    for kind, task, payload in log_of(db):
        if kind == "claimed":
            claims[task] = claims.get(task, 0) + 1
        elif kind == "status_changed" and payload.get("to") == "done":
            dones[task] = dones.get(task, 0) + 1
    return claims, dones


def test_a_run_killed_with_its_kernel_is_resumed_and_finished_with_no_step_worked_twice(
    tmp_path,
):
    db = tmp_path / "tasks.db"
    agent = agent_file(tmp_path, db)
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    try:
        for cell in ("%load_ext ollie_nb", f"%ollie agent {agent}", FOUR):
            assert k.run(cell).error is None, cell
        session = k.run("import ollie_nb\nprint(ollie_nb.agent().core.session.session_id)").text()
        steps = [t.id for t in open_store(db, create=False).list("all") if t.parent]
        assert len(steps) == 4
        started = k.run("w = get_ipython().run_line_magic('ollie', 'run --parallel 2 --bg')")
        assert started.error is None

        def half_done() -> bool:
            claims, dones = claims_and_dones(db)
            return len(dones) >= 2 and len(claims) == 4

        wait_until(half_done, 40, "two steps done and the next two claimed")  # then kill it
        k.km.restart_kernel(now=True)  # the kernel is killed, a fresh one takes its place
        k.kc.wait_for_ready(timeout=60)
        claims_before, dones_before = claims_and_dones(db)
        held = set(claims_before) - set(dones_before)
        assert held and len(dones_before) < 4, (claims_before, dones_before)
        assert k.run("%load_ext ollie_nb").error is None
        resumed = k.run(f"%ollie resume {session.strip()}")
        assert "plan 1 was being worked in parallel" in resumed.text(), resumed.text()
        run = k.run("%ollie run --parallel 2", timeout=60)
        assert run.error is None, run.error
        assert run.texts()[-1].splitlines()[0].startswith("plan 1: "), run.texts()
    finally:
        k.shutdown()
    claims, dones = claims_and_dones(db)
    done_steps = {task: n for task, n in dones.items() if task in steps}  # the goal closes too
    assert done_steps == {step: 1 for step in steps}, dones  # every step done exactly once
    for step in steps:  # a step held by the dead kernel was claimed again, once; no other
        assert claims[step] == (2 if step in held else 1), (step, claims)
    expired = sorted(task for kind, task, _ in log_of(db) if kind == "lease_expired")
    assert expired == sorted(held), expired  # the dead kernel's claims ran out, nothing else
