"""A refused bearer token on an HTTP MCP server is reported as such, with where it comes from.

The server is the real `ollie-tasks serve --http --token` process.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ollie_nb.core import AgentConfig, AgentCore, ServerDescription, ServersDescription, ServerState
from ollie_nb.llm import OfflineBackend
from ollie_nb.tools import McpServer
from tests.support.tasks_harness import PYTHON_M

REFUSED = "the server refused the credentials (HTTP 401: missing or wrong bearer token)"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def _serving(db: Path, token: str, port: int) -> Iterator[str]:
    """`ollie-tasks serve --http` on `port` with `token`; yields its MCP URL."""
    argv = [*PYTHON_M, "serve", "--db", str(db), "--http", "--port", str(port), "--token", token]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, "ollie-tasks exited"
                assert time.monotonic() < deadline, "ollie-tasks did not listen within 30 s"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def tasks_url(tmp_path_factory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("auth") / "tasks.db"
    with _serving(db, "the-right-token", _free_port()) as url:
        yield url


def _servers(url: str, headers: dict[str, str] | None, tmp_path) -> ServersDescription:
    entry: dict = {"url": url, "timeout": 20.0}
    if headers is not None:
        entry["headers"] = headers
    config = AgentConfig.from_dict({"mcpServers": {"tasks": entry}})
    core = AgentCore(OfflineBackend(), agent=config, workdir=tmp_path)

    async def scenario() -> ServersDescription:
        async with core:
            return core.list_servers()

    return asyncio.run(scenario())


def _status(listing: ServersDescription) -> ServerDescription:
    return next(s for s in listing.servers if s.name == "tasks")


def test_a_wrong_token_from_a_variable_names_the_header_and_variable(
    tasks_url, tmp_path, monkeypatch
):
    monkeypatch.setenv("TASKS_TOKEN", "wrong-token-value")
    listing = _servers(tasks_url, {"Authorization": "Bearer ${TASKS_TOKEN}"}, tmp_path)
    status = _status(listing)
    assert status.state is ServerState.FAILED
    assert status.detail == (
        f"tasks ({tasks_url}): {REFUSED}; the headers come from mcpServers.tasks.headers "
        "(Authorization from $TASKS_TOKEN)"
    )
    assert "wrong-token-value" not in str(listing)
    assert f"MCP server {status.detail}" in listing.messages


def test_a_token_written_in_the_file_is_never_quoted(tasks_url, tmp_path):
    listing = _servers(tasks_url, {"Authorization": "Bearer literal-secret"}, tmp_path)
    assert _status(listing).detail == (
        f"tasks ({tasks_url}): {REFUSED}; the headers come from mcpServers.tasks.headers (Authorization)"
    )
    assert "literal-secret" not in str(listing)


def test_no_headers_says_how_to_give_them(tasks_url, tmp_path):
    detail = _status(_servers(tasks_url, None, tmp_path)).detail
    assert detail == (
        f"tasks ({tasks_url}): {REFUSED}; no headers are set: give the token as mcpServers.tasks.headers, "
        'e.g. {"Authorization": "Bearer ${TOKEN}"}'
    )


def test_the_right_token_connects(tasks_url, tmp_path, monkeypatch):
    monkeypatch.setenv("TASKS_TOKEN", "the-right-token")
    status = _status(_servers(tasks_url, {"Authorization": "Bearer ${TASKS_TOKEN}"}, tmp_path))
    assert status.state is ServerState.CONNECTED and "task_create" in [n for n, _ in status.tools]


@pytest.mark.slow
def test_a_token_refused_during_a_session_is_reported_on_the_call(tmp_path):
    """The server comes back with another token: the next call says it was refused."""
    port, db = _free_port(), tmp_path / "tasks.db"
    headers = {"Authorization": "Bearer first-token"}
    server = McpServer(
        "tasks", url=f"http://127.0.0.1:{port}/mcp", headers=headers, call_timeout=20
    )

    async def call() -> str:
        result = await server.call_tool("task_list", {})
        return result.text

    loop = asyncio.new_event_loop()
    try:
        with _serving(db, "first-token", port):
            loop.run_until_complete(server.connect())
            assert loop.run_until_complete(call()) == "no open tasks"
        with _serving(db, "rotated-token", port):
            refused = loop.run_until_complete(call())
        loop.run_until_complete(server.aclose())
    finally:
        loop.close()
    assert refused == (f"error: tasks.task_list: {REFUSED}; the headers given: Authorization")
