"""A real local HTTP server that replays scripted provider responses and records the requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_KEY = "sk-test-0123456789-SECRET-abcdef"


@dataclass
class Reply:
    """One scripted response: status, headers, body pieces sent as separate chunks."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    reset_after: int | None = None  # send this many chunks, then reset the connection
    hold_open: bool = False  # after the chunks, keep the response open until the client hangs up


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; `data` is JSON-encoded unless it is already a string."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    """A plain (non-streamed) JSON response."""
    return Reply(
        status=status,
        chunks=[json.dumps(body).encode()],
        headers=headers or {},
        content_type="application/json",
    )


class FakeProvider:
    """Serves queued Replies in order on 127.0.0.1 and records every request."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        # with no reply queued: a model scripted on the request (None: an HTTP 500)
        self.respond: Callable[[Recorded], Reply] | None = None
        self.hangups = 0  # held-open responses the client closed
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                recorded = Recorded(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                provider.requests.append(recorded)
                if provider.replies:
                    reply = provider.replies.popleft()
                elif provider.respond is not None:
                    reply = provider.respond(recorded)
                else:
                    reply = json_reply(500, {"error": {"message": "no reply scripted"}})
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for n, chunk in enumerate(reply.chunks):
                    if reply.reset_after is not None and n >= reply.reset_after:
                        self._reset()
                        return
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                if reply.reset_after is not None:
                    self._reset()
                    return
                if reply.hold_open:
                    self._wait_for_hangup()
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _wait_for_hangup(self) -> None:
                self.close_connection = True
                self.connection.settimeout(10)
                try:
                    while self.connection.recv(1024):
                        pass
                except OSError:
                    pass
                provider.hangups += 1

            def _reset(self) -> None:
                # SO_LINGER 0: close() sends a TCP RST, like a server that crashed mid-stream.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                self.connection.close()

            def finish(self) -> None:
                with contextlib.suppress(OSError):
                    super().finish()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def collect(make_stream: Callable[[], AsyncIterator[Any]]) -> list[Any]:
    """Run one chat_stream to the end in a fresh event loop and return its events."""

    async def run() -> list[Any]:
        return [event async for event in make_stream()]

    return asyncio.run(run())
