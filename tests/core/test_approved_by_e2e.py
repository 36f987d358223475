"""`ollie-work --approved-by NAME` works only the plans whose approval mark NAME set, end to end:
a real `ollie-tasks serve --http --tokens FILE` process, real worker processes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from ollie_nb.planning import APPROVED_LABEL
from tests.core.test_workers import start_worker
from tests.support.tasks_harness import as_user, http_server, ok

pytestmark = pytest.mark.slow  # a server process and worker processes


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


ALICE, MALLORY = "alice-token-0123456789", "mallory-token-0123456789"
WORKER = "worker-token-0123456789"  # the server's one unnamed token: claims under any name


@asynccontextmanager
async def _http_store(tmp: Path) -> AsyncIterator[str]:
    """ollie-tasks over HTTP with the users alice and mallory, and the worker's unnamed token;
    yields its URL."""
    users = tmp / "users"
    users.write_text(f"alice {ALICE}\nmallory {MALLORY}\n")
    (tmp / "token").write_text(WORKER + "\n")
    options = ("--tokens", str(users), "--token-file", str(tmp / "token"))
    async with http_server(tmp / "tasks.db", *options) as url:
        yield url


async def _approved_plan(url: str, token: str, title: str) -> tuple[str, str]:
    """A goal its user marks approved, with one step: (goal, step)."""
    async with as_user(url, token) as user:
        goal = await ok(user, "task_create", title=title, labels=[APPROVED_LABEL])
        step = await ok(user, "task_create", title=f"{title}: the step", parent=goal)
    return goal, step


async def _statuses(url: str, *ids: str) -> list[str]:
    async with as_user(url, ALICE) as alice:
        reads = [json.loads(await ok(alice, "task_read", id=i, format="json")) for i in ids]
    return [r["status"] for r in reads]


def _work(tmp: Path, server: dict, *args: str) -> subprocess.CompletedProcess[str]:
    agent = tmp / "worker.json"
    agent.write_text(json.dumps({"mcpServers": {"tasks": server}, "claimLease": 10}))
    proc = start_worker(tmp, agent, "w1", "--until-idle", *args, every=False)
    try:
        out, err = proc.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(out[-3000:] + err[-3000:]) from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.anyio
async def test_approved_by_alice_works_alices_approved_plan_not_mallorys(tmp_path: Path) -> None:
    async with _http_store(tmp_path) as url:
        alices = await _approved_plan(url, ALICE, "Alice's report")
        mallorys = await _approved_plan(url, MALLORY, "Mallory's errand")
        server = {"url": url, "headers": {"Authorization": f"Bearer {WORKER}"}}
        run = await anyio.to_thread.run_sync(
            lambda: _work(tmp_path, server, "--approved-by", "alice")
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert "working the plans labelled 'approved' by alice" in run.stdout
        assert await _statuses(url, alices[1], mallorys[1]) == ["done", "open"]


def test_approved_by_is_refused_in_one_line_by_a_store_that_cannot_tell(
    tmp_path: Path, fake_task_server
) -> None:
    run = _work(tmp_path, fake_task_server()["tasks"], "--approved-by", "alice")
    assert run.returncode == 1, run
    assert run.stderr.strip().splitlines() == [
        "ollie-work: the task store cannot tell who approved a plan (--approved-by)"
    ]


def test_approved_by_with_all_is_a_usage_error(tmp_path: Path) -> None:
    agent = tmp_path / "none.json"
    agent.write_text("{}")
    proc = start_worker(tmp_path, agent, "w1", "--approved-by", "alice")  # with --all
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "not with --all or --plan" in err, err
