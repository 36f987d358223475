"""Headless workers (`python -m ollie_nb work`): real worker processes on one SQLite store.

Each worker runs its own ollie-tasks server and the offline model (which works a step
prompt by marking its task done); every check reads the store's event log.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ollie_nb.tasks import open_store
from tests.core.test_parallel_plans import claims_and_dones, event_log
from tests.support.agents import kernel_env
from tests.support.waits import until, wait_until

ROOT = Path(__file__).resolve().parents[2]


def plan_in_store(db: Path, steps: int) -> tuple[str, list[str]]:
    with open_store(db) as store:
        goal = store.create("Chores")
        return goal, [store.create(f"Chore {i}", parent=goal) for i in range(1, steps + 1)]


def this_tree() -> dict[str, dict[str, str]]:
    """A server entry's env that imports this tree's ollie_nb (MCP servers get a bare env)."""
    return {"env": {"PYTHONPATH": os.environ.get("PYTHONPATH") or str(ROOT)}}


def agent_file(tmp: Path, db: Path, lease: float = 10, **extra) -> Path:
    server = {
        "command": sys.executable,
        "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
        **this_tree(),
    }
    path = tmp / "worker.json"
    path.write_text(json.dumps({"mcpServers": {"tasks": server}, "claimLease": lease, **extra}))
    return path


def start_worker(
    tmp: Path,
    agent: Path,
    name: str,
    *args: str,
    every: bool = True,
    model: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    """A worker process; `every`: `--all` (these tests put plans in the store unapproved);
    `model`: the chat backend's variables (default: the offline model)."""
    cmd = [sys.executable, "-m", "ollie_nb", "work", "--agent", str(agent), "--name", name]
    cmd += ["--all"] if every else []
    env = {**os.environ, **kernel_env(tmp / name), **(model or {})}
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
        assert out.splitlines()[-1].endswith("idle: no step is ready or held with a lease"), out
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
    wait_line(worker, "claimed: step ")
    wait_line(worker, "claimed: step ")  # two steps held (a worker takes them in its own order)
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
    held_by_it = [t for _, k, t, _ in event_log(db) if k == "claimed"]
    assert len(held_by_it) == 2 and set(held_by_it) <= set(steps), held_by_it
    assert sorted(back) == sorted(held_by_it), back  # the two it held, handed back
    _claims, dones = claims_and_dones(db)
    assert len(dones) < len(steps)  # it stopped, not finished the plan


TAP = ROOT / "tests" / "support" / "mcp_tap.py"


def tapped_agent(tmp: Path, db: Path, log: Path) -> Path:
    """An agent file whose ollie-tasks server logs each request the worker sends it."""
    serve = [sys.executable, "-m", "ollie_nb.tasks", "serve", "--db", str(db)]
    server = {"command": sys.executable, "args": [str(TAP), str(log), *serve], **this_tree()}
    path = tmp / "worker.json"
    path.write_text(json.dumps({"mcpServers": {"tasks": server}, "claimLease": 10}))
    return path


def requests_of(log: Path, what: str) -> int:
    return log.read_text().splitlines().count(what) if log.exists() else 0


def test_a_waiting_worker_starts_a_new_step_on_the_change_signal_without_polling(tmp_path):
    db, log = tmp_path / "tasks.db", tmp_path / "requests.log"
    with open_store(db) as store:
        goal = store.create("Chores")
        store.update(store.create("Chore 1", parent=goal), status="done")
    worker = start_worker(tmp_path, tapped_agent(tmp_path, db, log), "w1")
    try:

        def waiting() -> bool:  # its first look, then it waits
            assert worker.poll() is None, "it exited before it waited"
            return requests_of(log, "tools/call task_events") >= 2

        wait_until(waiting, 60, "the worker's wait")
        reads = requests_of(log, "tools/call task_events")
        time.sleep(3.0)  # a worker polling every quarter second would read the log 12 times
        idle_reads = requests_of(log, "tools/call task_events") - reads
        with open_store(db) as store:
            new = store.create("Chore 2", parent=goal)
        created = time.monotonic()
        line = wait_line(worker, " done: step 2 ", within=30)
        started = time.monotonic() - created
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=30)
    assert idle_reads <= 1, idle_reads  # the signal wakes it, not a poll of task_events
    subscribed = ("subscriptions/listen", "resources/subscribe")
    assert any(requests_of(log, s) for s in subscribed), log.read_text()
    assert new in line and started < 5.0, (line, started)
    _claims, dones = claims_and_dones(db)
    assert len(dones[new]) == 1


def test_a_worker_prompt_carries_the_goal_and_the_step_body(tmp_path):
    from tests.llm.test_openai import DONE, TEXT_REPLY, USAGE_CHUNK, call_delta, chunk
    from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply

    db = tmp_path / "tasks.db"
    body = "Use the <blue> bucket; rinse twice.\nThen air the room."
    with open_store(db) as store:
        goal = store.create("Tidy the flat")
        step = store.create("Wash the floor", body=body, parent=goal)
    provider = FakeProvider()
    provider.start()
    marks_done = [
        chunk({"role": "assistant", "content": None}),
        call_delta(0, json.dumps({"id": step, "status": "done"}), "call_1", "task_update"),
        chunk({}, "tool_calls"),
        USAGE_CHUNK,
        DONE,
    ]
    provider.queue(Reply(chunks=marks_done), Reply(chunks=TEXT_REPLY))
    model = {
        "OLLIE_BACKEND": "openai",
        "OLLIE_OPENAI_URL": provider.url + "/v1",
        "OLLIE_OPENAI_KEY": FAKE_KEY,
        "OLLIE_MODEL": "gpt-4o-mini",
    }
    try:
        agent = str(agent_file(tmp_path, db))
        cmd = [sys.executable, "-m", "ollie_nb", "work", "--agent", agent, "--all"]
        env = {**os.environ, **kernel_env(tmp_path / "w"), **model}
        done = subprocess.run(
            [*cmd, "--until-idle"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    finally:
        provider.stop()
    assert done.returncode == 0, done.stderr[-2000:]
    asked = [r.body for r in provider.requests if r.method == "POST"]
    prompt = [m for m in asked[0]["messages"] if m["role"] == "user"][-1]["content"]
    assert prompt.startswith(f"Goal: Tidy the flat\n\nStep 1 of 1 [task {step}]: Wash the floor\n")
    assert body in prompt  # the step's body, as a notebook's parallel run hands it over
    _claims, dones = claims_and_dones(db)
    assert len(dones[step]) == 1


@pytest.mark.anyio
async def test_a_waiting_worker_keeps_its_signal_through_its_safety_reads(
    make_core, tmp_path, monkeypatch
):
    from ollie_nb.core import _worker
    from ollie_nb.core._worker import Worker, WorkOptions
    from tests.support.agents import tasks_agent

    monkeypatch.setattr(_worker, "SIGNAL_CHECK", 0.2)  # a look at the log every 0.2 s
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        goal = store.create("Chores")
        store.update(store.create("Chore 1", parent=goal), status="done")
    core = await make_core(agent=tasks_agent(db), name="w1", start=False)
    lines: list[str] = []
    worker = Worker(core, WorkOptions("tasks", name="w1", every=True), lines.append)
    await core.start()
    run = asyncio.ensure_future(worker.run())
    await until(lambda: worker.waits == "signal", 30, "the worker's wait on the signal")
    await asyncio.sleep(1.0)  # the behaviour under test: five safety looks pass
    with open_store(db) as store:
        new = store.create("Chore 2", parent=goal)
    created = time.monotonic()
    await until(lambda: new in claims_and_dones(db)[1], 30, "the new step done")
    took = time.monotonic() - created
    worker.stop("SIGTERM")
    code = await run
    assert code == 143 and took < 5.0, (code, took)
    assert not [line for line in lines if "change signal lost" in line], lines
    assert worker.waits == "signal"


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


@pytest.mark.anyio
async def test_a_waiting_worker_reads_the_store_when_a_claim_it_saw_runs_out(make_core, tmp_path):
    """A lapsed claim sends no signal (the store reopens it when next read): a worker
    waiting on the signal looks again at the lease's end, not at its 30 s safety read."""
    from ollie_nb.core._worker import SIGNAL_CHECK, Worker, WorkOptions
    from tests.support.agents import tasks_agent

    lease = 8.0
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        goal = store.create("Chores")
        held = store.create("Chore 1", parent=goal)
        store.claim(held, "holder", lease=lease)  # a worker that died: never renewed
    claimed = time.monotonic()
    core = await make_core(agent=tasks_agent(db), name="w1", start=False)
    worker = Worker(core, WorkOptions("tasks", name="w1", every=True), lambda line: None)
    await core.start()
    run = asyncio.ensure_future(worker.run())
    deadline = claimed + lease
    while worker.waits != "signal":
        assert time.monotonic() < deadline, "the worker never waited on the signal"
        await asyncio.sleep(0.02)
    deadline = claimed + SIGNAL_CHECK - 5  # well before a safety read
    while held not in claims_and_dones(db)[1]:
        assert time.monotonic() < deadline, "the lapsed claim waited for a safety read"
        await asyncio.sleep(0.05)
    took = time.monotonic() - claimed
    worker.stop("SIGTERM")
    await run
    assert lease <= took < lease + 5, took  # taken again once the lease ran out
    by = [p["assignee"] for _, k, t, p in event_log(db) if k == "claimed" and t == held]
    assert by[0] == "holder" and by[1].startswith("w1"), by


def test_a_worker_finishes_a_plan_behind_a_full_page_of_other_tasks(tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:  # 60 ordinary tasks, 1.2 KB each: more than one listing page
        for i in range(60):
            store.create(f"Errand {i}", body="x" * 1200)
    _goal, steps = plan_in_store(db, 1)
    worker = start_worker(tmp_path, agent_file(tmp_path, db), "w1", "--until-idle")
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err[-2000:]
    _claims, dones = claims_and_dones(db)
    assert list(dones) == steps, out  # the plan's step, listed on a later page, was worked


def test_until_idle_waits_for_a_leased_claim_names_its_holder_then_works_what_it_unblocks(tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        goal = store.create("Chores")
        first = store.create("Chore 1", parent=goal)
        then = store.create("Chore 2", parent=goal, blockers=[first])
        store.claim(first, "bob", lease=600)  # another worker, alive: it renews its lease
    worker = start_worker(tmp_path, agent_file(tmp_path, db), "w1", "--until-idle")
    try:
        line = wait_line(worker, "held: ")
        assert f"{first} (Chore 1) by bob, lease ends " in line, line
        assert worker.poll() is None  # not idle while bob's lease can run out
        with open_store(db, create=False) as store:  # bob finishes: Chore 2 is ready
            store.update(first, status="done")
        out, err = worker.communicate(timeout=60)
    finally:
        worker.kill()
    assert worker.returncode == 0, err[-2000:]
    assert claims_and_dones(db)[1].get(then), out  # the step bob's unblocked was worked
    assert out.splitlines()[-1].endswith("idle: no step is ready or held with a lease"), out


def test_until_idle_does_not_wait_on_a_claim_without_end(tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        goal = store.create("Chores")
        stuck = store.create("Chore 1", parent=goal)
        free = store.create("Chore 2", parent=goal)
        store.claim(stuck, "bob", lease=0)  # trusted CLI access: a claim that never ends
    worker = start_worker(tmp_path, agent_file(tmp_path, db), "w1", "--until-idle")
    try:
        out, err = worker.communicate(timeout=60)
    finally:
        worker.kill()
    assert worker.returncode == 0, err[-2000:]
    assert claims_and_dones(db)[1].get(free), out
    last = out.splitlines()[-1]
    assert "idle: no step is ready or held with a lease (held without end" in last, out
    assert f"{stuck} (Chore 1) by bob, no lease: not waited on" in last, out


BLOCK_BROKEN = 'if printf %s "$OLLIE_PROMPT" | grep -q Broken; then echo no >&2; exit 2; fi'


def test_a_worker_exits_1_after_a_step_failed(tmp_path):
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        goal = store.create("Chores")
        broken = store.create("Broken chore", parent=goal)
        fine = store.create("Chore 2", parent=goal)
    agent = agent_file(tmp_path, db, hooks={"userPromptSubmit": [BLOCK_BROKEN]})
    worker = start_worker(tmp_path, agent, "w1", "--until-idle")
    try:
        out, err = worker.communicate(timeout=60)
    finally:
        worker.kill()
    assert worker.returncode == 1, (out, err[-2000:])  # scripts and CI see the failure
    assert "failed: step " in out and broken in out, out
    with open_store(db, create=False) as store:
        assert store.get(broken).status == "failed" and store.get(fine).status == "done"
