"""Shared fixtures: real stdio MCP server configs for the test task server."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.core import AgentCore
from ollie_nb.llm import Backend, OfflineBackend
from tests.support.absent import in_ci
from tests.support.agents import FIXTURES
from tests.support.slow import SpawnWatch, mark_slow

SPAWNS = SpawnWatch()

MakeCore = Callable[..., Awaitable[AgentCore]]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests (`@pytest.mark.anyio`) run on asyncio, the loop ollie_nb uses."""
    return "asyncio"


@pytest.fixture
async def make_core(tmp_path: Path) -> AsyncIterator[MakeCore]:
    """Factory: a started AgentCore (offline model, tmp workdir, no autosave), closed at teardown."""
    cores: list[AgentCore] = []

    async def make(
        backend: Backend | None = None,
        *,
        workdir: str | os.PathLike[str] | None = None,
        autosave: bool = False,
        start: bool = True,
        default_backend: bool = False,
        **kwargs: Any,
    ) -> AgentCore:
        """`default_backend`: no backend given, the core picks the agent config's or the
        environment's at start, as a session does; `start=False`: built, not yet started."""
        chosen = None if default_backend else backend or OfflineBackend()
        core = AgentCore(chosen, workdir=workdir or tmp_path, autosave=autosave, **kwargs)
        cores.append(core)
        return await core.start() if start else core

    yield make
    for core in reversed(cores):
        await core.aclose()


@pytest.fixture
def provider() -> Iterator:
    """A fake chat provider HTTP server on 127.0.0.1 (OpenAI, Anthropic, Ollama wire formats)."""
    from tests.support.llm_fake_provider import FakeProvider

    server = FakeProvider()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_task_server(tmp_path):
    """Factory: an mcpServers entry for tests/support/fixtures/fake_task_server.py with a FAULT mode."""

    def make(fault: str = "none", *, timeout: float = 10.0, name: str = "tasks") -> dict:
        store = tmp_path / f"{name}-store.json"
        return {
            name: {
                "command": sys.executable,
                "args": [str(FIXTURES / "fake_task_server.py")],
                "env": {"STORE": str(store), "FAULT": fault},
                "timeout": timeout,
            }
        }

    return make


@pytest.fixture
def ollie_tasks(tmp_path):
    """Factory: an mcpServers entry for the real `ollie-tasks` over stdio, and its database."""

    def make(*, timeout: float = 30.0, name: str = "tasks") -> tuple[dict, Path]:
        db = tmp_path / f"{name}.db"
        args = ["-m", "ollie_nb.tasks", "serve", "--db", str(db), "--watch-interval", "0"]
        return {name: {"command": sys.executable, "args": args, "timeout": timeout}}, db

    return make


def read_db(db: Path) -> dict[str, dict]:
    """The tasks a real task database holds, read straight from SQLite (no server between):
    id -> {title, parent, blockers, status}; {} before the server created the file."""
    if not db.exists():
        return {}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute("SELECT id, title, coalesce(parent, ''), status FROM tasks")
        tasks = {i: {"title": t, "parent": p, "blockers": [], "status": s} for i, t, p, s in rows}
        for task, blocker in conn.execute("SELECT task, blocker FROM deps ORDER BY task, blocker"):
            tasks[task]["blockers"].append(blocker)
    finally:
        conn.close()
    return tasks


@pytest.fixture
def db_tasks():
    """The reader of a real task database, as a fixture."""
    return read_db


def read_store(config: dict, name: str = "tasks") -> dict:
    """The tasks a fake task server's JSON store holds (read straight from its file)."""
    store = Path(config[name]["env"]["STORE"])
    return json.loads(store.read_text())["tasks"] if store.exists() else {}


@pytest.fixture
def stored_tasks():
    """The reader of a fake task server's store, as a fixture."""
    return read_store


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path_factory, monkeypatch):
    """Sessions, agents and backend env files of tests never touch the user's real dirs."""
    base = tmp_path_factory.mktemp("ollie-home")
    monkeypatch.setenv("OLLIE_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("OLLIE_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("OLLIE_ENV_FILE", str(base / "config" / "env"))
    for name in ("OLLIE_BACKEND", "OLLIE_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that start processes `slow`: `pytest -m "not slow"` is the fast set."""
    mark_slow(items)


def pytest_configure(config: pytest.Config) -> None:
    SPAWNS.install()


def _fail_skips_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    """In CI (CI=true) a skipped test or module fails, with the reason it gave for skipping."""
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI=true: nothing may be skipped in CI; {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """What a teardown starts is not the test's: the last test of a module (or of the run)
    also ends the fixtures of that scope (a PostgreSQL cluster's `runuser pg_ctl stop`)."""
    SPAWNS.paused = True
    try:
        yield
    finally:
        SPAWNS.paused = False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    _fail_skips_in_ci(report)
    if call.when == "teardown":
        SPAWNS.check(item, report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_skips_in_ci(outcome.get_result())
