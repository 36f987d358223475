"""McpServer: a tool Server over one MCP session (stdio subprocess or streamable HTTP).

One long-lived task owns each session: it enters the SDK `Client`, parks until
`aclose()`, then exits the `Client` in the same task (anyio cancel scopes demand
it). Calls come from any task on the same loop; each is bounded by a timeout, so
a dead or hung server gives an error result, never a hang.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, Any, TypeVar

from ollie_nb.errors import UnavailableError
from ollie_nb.tools._dispatcher import exc_summary
from ollie_nb.tools._types import ToolInfo, ToolResult

log = logging.getLogger("ollie_nb.tools")

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 30.0
_STDERR_TAIL = 2000  # bytes of a server's stderr quoted when it fails

_T = TypeVar("_T")


class McpConnectError(UnavailableError):
    """An MCP server could not be started or did not complete its handshake."""


class McpServer:
    """A Server backed by an MCP session; reconnects once on the next call after a crash."""

    def __init__(
        self,
        name: str,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        mode: str = "auto",
    ) -> None:
        if bool(command) == bool(url):
            raise ValueError(f"MCP server {name!r} needs exactly one of 'command' or 'url'")
        self.name = name
        self.command = command
        self.args = list(args)
        self.env = dict(env or {})
        self.cwd = cwd
        self.url = url
        self.headers = dict(headers or {})
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.mode = mode
        self._client: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._tools: list[ToolInfo] | None = None
        self._broken: str | None = None
        self._errlog: IO[str] | None = None
        self._reconnect_lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        target = self.url or " ".join([self.command or "", *self.args]).strip()
        state = "connected" if self.connected else (self._broken or "not connected")
        return f"McpServer({self.name!r}, {target!r}, {state})"

    @property
    def connected(self) -> bool:
        return self._client is not None and self._broken is None

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    # -- lifecycle ---------------------------------------------------------

    async def connect(self) -> None:
        """Start the session; raise McpConnectError with a one-line reason on failure."""
        if self._runner is not None:
            await self.aclose()
        self._broken = None
        self._tools = None
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._closing = asyncio.Event()
        self._errlog = _new_errlog() if self.command else None
        self._runner = asyncio.create_task(self._own_session(ready), name=f"mcp:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout)
        except asyncio.TimeoutError:
            await self.aclose()
            raise McpConnectError(
                f"{self.name}: no answer to the MCP handshake within {self.connect_timeout:g} s"
            ) from None
        except asyncio.CancelledError:
            await self.aclose()
            raise
        except Exception as exc:
            reason = self._failure_reason(exc)
            await self.aclose()
            raise McpConnectError(f"{self.name}: {reason}") from None

    async def _own_session(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        assert self._closing is not None
        try:
            async with Client(
                self._target(), read_timeout_seconds=self.call_timeout, mode=self.mode
            ) as client:
                self._client = client
                if not ready.done():
                    ready.set_result(None)
                await self._closing.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpConnectError("cancelled while connecting"))
        except BaseException as exc:  # the SDK wraps failures in (nested) exception groups
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            else:
                self._broken = exc_summary(exc)
                log.warning("MCP server %s: session ended: %s", self.name, self._broken)
        finally:
            self._client = None

    def _target(self) -> Any:
        if self.url:
            if not self.headers:
                return self.url
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(
                self.url, http_client=httpx2.AsyncClient(headers=self.headers)
            )
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.command or "", args=self.args, env=self.env or None, cwd=self.cwd
        )
        return stdio_client(params, errlog=self._errlog) if self._errlog else params

    def _failure_reason(self, exc: BaseException) -> str:
        if isinstance(exc, FileNotFoundError):
            return f"command not found: {self.command}"
        reason = exc_summary(exc)
        tail = self.stderr_tail()
        if tail:
            reason += f" (server stderr: {tail.splitlines()[-1]})"
        return reason

    def stderr_tail(self) -> str:
        """The last bytes the server wrote to stderr, for error messages and `%ollie mcp`."""
        if self._errlog is None:
            return ""
        try:
            self._errlog.flush()
            size = self._errlog.seek(0, os.SEEK_END)
            self._errlog.seek(max(0, size - _STDERR_TAIL))
            return self._errlog.read().strip()
        except (OSError, ValueError):
            return ""

    async def aclose(self) -> None:
        """End the session task (which exits the Client in the task that entered it)."""
        runner, self._runner = self._runner, None
        if runner is not None:
            if self._closing is not None:
                self._closing.set()
            try:
                await asyncio.wait_for(asyncio.shield(runner), 5.0)
            except (asyncio.TimeoutError, Exception):
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)
        self._client = None
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    # -- Server protocol ---------------------------------------------------

    async def list_tools(self) -> list[ToolInfo]:
        """The server's tools (cached after the first listing)."""
        if self._tools is None:
            client = await self._live_client()
            tools: list[ToolInfo] = []
            cursor: str | None = None
            while True:
                result = await asyncio.wait_for(client.list_tools(cursor=cursor), self.call_timeout)
                for tool in result.tools:
                    tools.append(
                        ToolInfo(
                            server=self.name,
                            name=tool.name,
                            description=tool.description or "",
                            input_schema=dict(tool.input_schema or {"type": "object"}),
                            sequential=_destructive(tool),
                        )
                    )
                cursor = result.next_cursor
                if not cursor:
                    break
            self._tools = tools
        return list(self._tools)

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Call a tool; timeouts, crashes and protocol errors come back as error results."""
        try:
            client = await self._live_client()
        except McpConnectError as exc:
            return ToolResult.error(f"MCP server {exc}")
        try:
            result = await _within(
                client.call_tool(name, args, read_timeout_seconds=self.call_timeout),
                self.call_timeout + 1.0,
            )
        except asyncio.TimeoutError:
            return ToolResult.error(f"{self.name}.{name} timed out after {self.call_timeout:g} s")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            summary = exc_summary(exc)
            kind = _failure_kind(exc)
            if kind == "lost":
                self._broken = summary
                tail = self.stderr_tail()
                if tail:
                    summary += f" (server stderr: {tail.splitlines()[-1]})"
                return ToolResult.error(
                    f"MCP server {self.name} is gone ({summary}); it will be restarted on the next call"
                )
            if kind == "timeout":
                return ToolResult.error(
                    f"{self.name}.{name} timed out after {self.call_timeout:g} s"
                )
            return ToolResult.error(f"{self.name}.{name}: {summary}")
        return _tool_result(result)

    @asynccontextmanager
    async def resource_updates(self, uri: str) -> AsyncIterator[AsyncIterator[Any] | None]:
        """The server's change signals for `uri` (MCP subscriptions/listen), or None if it offers none.

        Enter and exit it in one task. The signals carry no data: refetch on each one.
        """
        from mcp.client.subscriptions import ListenNotSupportedError

        client = await self._live_client()
        async with AsyncExitStack() as stack:
            try:
                sub = await stack.enter_async_context(client.listen(resource_subscriptions=[uri]))
            except ListenNotSupportedError:
                sub = None
            honored = sub.honored.resource_subscriptions if sub and sub.honored else None
            yield sub if honored and uri in honored else None

    async def _live_client(self) -> Any:
        """The connected client, reconnecting once if the session died or was never started."""
        if self._client is not None and self._broken is None:
            return self._client
        if self._reconnect_lock is None:
            self._reconnect_lock = asyncio.Lock()
        async with self._reconnect_lock:
            if self._client is None or self._broken is not None:
                log.info("MCP server %s: reconnecting", self.name)
                await self.connect()
        return self._client


async def _within(awaitable: Awaitable[_T], seconds: float) -> _T:
    """Await under a deadline, in the calling task where the Python version allows.

    `asyncio.wait_for` (before 3.12) runs the awaitable as a task of its own: about 50 µs
    more per tool call, some 4% of a stdio round trip. `asyncio.timeout` (3.11+) does not.
    """
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)


def _destructive(tool: Any) -> bool:
    """Whether the server's annotations say the tool is destructive (`destructiveHint: true`):
    such a tool runs alone. The hint's default (true) is not taken: a server that says
    nothing about its tools would otherwise run every call one by one."""
    annotations = getattr(tool, "annotations", None)
    return getattr(annotations, "destructive_hint", None) is True


def _tool_result(result: Any) -> ToolResult:
    """Flatten MCP content into text: text items joined, others named by type."""
    parts: list[str] = []
    for item in result.content or []:
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(text)
        else:
            parts.append(f"[{getattr(item, 'type', 'content')} content]")
    return ToolResult("\n".join(parts), is_error=bool(result.is_error))


# A transport that broke under the SDK, before it could turn that into CONNECTION_CLOSED.
_LOST = (BrokenPipeError, ConnectionError, EOFError)


def _failure_kind(exc: BaseException) -> str:
    """ "lost" (the session is gone), "timeout" (the request timed out) or "" for a failed call.

    Decided by the SDK's error codes, never by message text. Imported here: the SDK is
    loaded by the session anyway, and importing this module must stay cheap.
    """
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    code = exc.code if isinstance(exc, MCPError) else None
    if code == CONNECTION_CLOSED or isinstance(exc, _LOST):
        return "lost"
    return "timeout" if code == REQUEST_TIMEOUT else ""


def _new_errlog() -> IO[str]:
    return tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
