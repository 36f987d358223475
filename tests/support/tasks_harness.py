"""Helpers for the task server tests: spawn the real server and talk to it through mcp's Client."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

PYTHON_M = [sys.executable, "-m", "ollie_nb.tasks"]


def server_params(db: str | Path, *extra: str) -> StdioServerParameters:
    """How an MCP client starts `python -m ollie_nb.tasks serve --db DB`."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "ollie_nb.tasks", "serve", "--db", str(db), *extra]
    )


@asynccontextmanager
async def connect(db: str | Path, *extra: str, mode: str = "auto") -> AsyncIterator[Client]:
    """A Client connected to a fresh server process on `db`; the process ends on exit."""
    async with Client(server_params(db, *extra), read_timeout_seconds=30, mode=mode) as client:
        yield client


async def ok(client: Client, tool: str, **args: Any) -> str:
    """Call a tool that must succeed and return its only text content."""
    result = await client.call_tool(tool, args)
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error, f"{tool}({args}) failed: {text}"
    assert len(result.content) == 1, result.content
    return text


async def fails(client: Client, tool: str, **args: Any) -> str:
    """Call a tool that must fail and return the error text the model would see."""
    result = await client.call_tool(tool, args)
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error, f"{tool}({args}) should have failed but returned: {text}"
    return text


def claim_token(answer: str) -> str:
    """The token of a task_claim answer (its `token: ...` line)."""
    tokens = [
        line.removeprefix("token: ") for line in answer.splitlines() if line.startswith("token: ")
    ]
    assert len(tokens) == 1, answer
    return tokens[0]


def cli(
    db: str | Path | None, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `python -m ollie_nb.tasks [--db DB] ARGS...` and capture its output."""
    db_args = ["--db", str(db)] if db is not None else []
    return subprocess.run(
        [*PYTHON_M, *db_args, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_listening(proc: subprocess.Popen[Any], port: int) -> None:
    """Wait until the server process `proc` accepts connections on `port`."""
    with anyio.fail_after(20):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                assert proc.poll() is None, "server exited"
                await anyio.sleep(0.05)


@asynccontextmanager
async def http_server(db: Path, *options: str) -> AsyncIterator[str]:
    """A real `ollie-tasks serve --http` process on `db` (with `options`); yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [*PYTHON_M, "serve", "--db", str(db), "--http", "--port", str(port), *options],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # unread: a full pipe would stall the server
    )
    try:
        await wait_listening(proc, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@asynccontextmanager
async def as_user(url: str, token: str) -> AsyncIterator[Client]:
    """An MCP client of the HTTP store at `url` that sends `token` as its bearer token."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    authed = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with authed, Client(streamable_http_client(url, http_client=authed)) as client:
        yield client
