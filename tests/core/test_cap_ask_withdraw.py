"""A run stopped while it waits at a cap withdraws its request (no board keeps asking a
person about work that no longer waits), and a kernel's run tells its own log of the
pause (real ollie-tasks and SQLite, the offline model)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from ollie_nb.core import Event, WatchNotice, WatchWhat
from tests.core.test_cap_ask_core import asked, capped_core, open_caps
from tests.core.test_worker_cap_ask import cap_requests, finished, plan, rows, states, worker
from tests.support.waits import until

pytestmark = pytest.mark.slow  # ollie-tasks subprocesses


@pytest.mark.anyio
async def test_a_run_stopped_at_its_cap_answers_its_request_stop(make_core, tmp_path):
    db = tmp_path / "t.db"
    core = await capped_core(make_core, db)
    client = core.servers.task_client
    run = asyncio.ensure_future(core.runs.run_plan(parallel=1))
    await until(lambda: asked(db), timeout=60, what="the cap request")
    [request] = await open_caps(client)
    run.cancel()  # Stop (Ctrl-C, %ollie stop, a worker's SIGTERM)
    await asyncio.gather(run, return_exceptions=True)

    await until(lambda: not asked(db), timeout=30, what="the request withdrawn")
    [row] = await client.inbox("all", [request.id])
    assert row.answer == "stop"
    assert not await open_caps(client)


@pytest.mark.anyio
async def test_a_worker_stopped_while_it_waits_at_a_cap_withdraws_its_request(tmp_path, provider):
    db = tmp_path / "tasks.db"
    _goal, steps = plan(db)
    proc = worker(tmp_path, db, provider, "--ask", "--ask-timeout", "600")
    await until(lambda: cap_requests(db), timeout=60, what="the worker's cap request")
    [(request, *_)] = cap_requests(db)
    proc.send_signal(signal.SIGTERM)
    code, out, _err = finished(proc)
    assert code != 0
    assert not cap_requests(db), out  # not left open for 600 s
    [(answer,)] = rows(db, f"SELECT answer FROM inbox WHERE id = '{request}'")
    assert answer == "stop"
    assert "in_progress" not in states(db, steps)  # handed back as without asking


@pytest.mark.anyio
async def test_a_kernels_parallel_run_tells_its_own_log_what_waits_at_its_cap(make_core, tmp_path):
    """The run's widget reads its notices, not the turn's cell (none runs): the pause, and
    its answer, are told there."""
    db = tmp_path / "t.db"
    core = await capped_core(make_core, db)
    client = core.servers.task_client
    told: list[str] = []

    def sink(event: Event) -> None:
        if isinstance(event, WatchNotice) and event.what is WatchWhat.NOTE:
            told.append(event.text)

    run = asyncio.ensure_future(core.runs.run_plan(parallel=1, on_event=sink))
    await until(lambda: asked(db), timeout=60, what="the cap request")
    [request] = await open_caps(client)
    await until(lambda: told, timeout=10, what="the pause told to the run")
    assert told == [f"asked: {request.id} {request.what} (waits 30 s for an answer)"]
    await client.answer(request.id, "raise:100000", "ann")
    await asyncio.wait_for(run, 60)
    assert told[1] == f"answered: {request.id} raise by 100,000 tokens"
