"""An HTTP MCP server that cannot be reached: one line with its name, its URL, what happened
and what to check (no process: a closed port, and a socket that accepts and says nothing)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from ollie_nb.tools import McpServer
from ollie_nb.tools._mcp import McpConnectError


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


async def _failure(url: str, timeout: float = 10.0) -> str:
    server = McpServer("tasks", url=f"{url}?token=secret-in-query", connect_timeout=timeout)
    with pytest.raises(McpConnectError) as failed:
        await server.connect()
    return str(failed.value)


@pytest.mark.anyio
async def test_a_closed_port_says_refused_and_what_to_check():
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    assert await _failure(url) == (
        f"tasks ({url}): connection refused: nothing listens at that host and port; check that "
        "the server runs and that the URL's host and port are right"
    )


@pytest.mark.anyio
async def test_a_silent_server_says_no_handshake_and_names_the_timeout_key(silent_url):
    assert await _failure(silent_url, 0.5) == (
        f"tasks ({silent_url}): no answer to the MCP handshake within 0.5 s; check that the "
        "server runs and answers MCP there, or raise mcpServers.tasks.connectTimeout"
    )
