"""McpServer: a tool Server over one MCP session (stdio subprocess or streamable HTTP).

One long-lived task owns each session: it enters the SDK `Client`, parks until
`aclose()`, then exits the `Client` in the same task (anyio cancel scopes demand
it). Calls come from any task on the same loop; each is bounded by a timeout, so
a dead or hung server gives an error result, never a hang.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TextIO, TypeVar

from ollie_nb.errors import UnavailableError
from ollie_nb.tools._bounds import DEFAULT_RESULT_CAP
from ollie_nb.tools._content import tool_result
from ollie_nb.tools._dispatcher import exc_summary
from ollie_nb.tools._iri_syntax import prepare_result_checks
from ollie_nb.tools._listing import DEFAULT_LISTING_CAPS, ListingCaps, fit_listing
from ollie_nb.tools._mcp_signals import ResourceSignals, subscribed
from ollie_nb.tools._types import ToolInfo, ToolResult

if sys.version_info < (3, 11):  # Python 3.10
    from exceptiongroup import BaseExceptionGroup

log = logging.getLogger("ollie_nb.tools")

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 30.0
_STDERR_TAIL = 2000  # bytes of a server's stderr quoted when it fails
_REFUSAL_BODY = 4096  # bytes of a 401/403 body read for the server's message
_REFUSAL_TEXT = 200  # characters of that message quoted

TASK_REQUIRED = (
    "it only runs as a task-augmented call (execution.taskSupport: required), "
    "which this client does not make"
)
"""Why a tool whose definition requires task augmentation is not offered to the model."""

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
        credentials_hint: str = "",
        result_cap: int = DEFAULT_RESULT_CAP,
        listing_caps: ListingCaps = DEFAULT_LISTING_CAPS,
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
        self.credentials_hint = credentials_hint  # where the headers come from, for a refusal
        self.withheld: dict[str, str] = {}  # tools listed but not offered, with the reason
        self.listing_caps = listing_caps  # what its tool listing may put into each request
        self.listing_notice = ""  # what of the listing was cut to those caps ("": nothing)
        self.result_cap = (
            result_cap  # characters of a result's text joined, as the dispatcher's cap
        )
        self._client: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._tools: list[ToolInfo] | None = None
        self._broken: str | None = None
        self._errlog: TextIO | None = None
        self._reconnect_lock: asyncio.Lock | None = None
        self._http: Any = None  # the HTTP client of a url server, closed with the session
        self._refusal: str | None = None  # "HTTP 401: ..." of the last refused request
        self._signals = ResourceSignals()  # resources/subscribe streams (2025 protocol)

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

    @property
    def program(self) -> str:
        """The name the server gave itself at the handshake (`serverInfo.name`), or ""."""
        info = getattr(self._client, "server_info", None) if self._client is not None else None
        return str(getattr(info, "name", "") or "")

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
                f"{self.name} ({self.target}): no answer to the MCP handshake within "
                f"{self.connect_timeout:g} s; check that the server runs and answers MCP there, "
                f"or raise mcpServers.{self.name}.connectTimeout"
            ) from None
        except asyncio.CancelledError:
            await self.aclose()
            raise
        except Exception as exc:
            reason = self._take_refusal() or self._failure_reason(exc)
            await self.aclose()
            raise McpConnectError(f"{self.name} ({self.target}): {reason}") from None

    @property
    def target(self) -> str:
        """Where the server is, for messages: its URL without credentials or query, or its
        command without arguments (either may carry a token)."""
        if self.url:
            return _bare_url(self.url)
        return f"command {self.command}"

    async def _own_session(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        prepare_result_checks()  # the SDK checks structured results with jsonschema
        assert self._closing is not None
        try:
            async with Client(
                self._target(),
                read_timeout_seconds=self.call_timeout,
                mode=self.mode,
                message_handler=self._signals.on_message,
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
            self._signals.end()

    def _target(self) -> Any:
        if self.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            # The SDK's timeouts (30 s, 300 s to read a stream), and a hook that keeps what
            # the SDK drops of a refusal: the status and the server's message.
            self._http = httpx2.AsyncClient(
                headers=self.headers,
                timeout=httpx2.Timeout(30.0, read=300.0),
                event_hooks={"response": [self._note_refusal]},
            )
            return streamable_http_client(self.url, http_client=self._http)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.command or "", args=self.args, env=self.env or None, cwd=self.cwd
        )
        return stdio_client(params, errlog=self._errlog) if self._errlog else params

    async def _note_refusal(self, response: Any) -> None:
        if response.status_code in (401, 403):
            self._refusal = await _refusal(response)

    def _take_refusal(self) -> str:
        """'the server refused the credentials (...)' if the last request was refused, else ''."""
        refusal, self._refusal = self._refusal, None
        if refusal is None:
            return ""
        source = self.credentials_hint or (
            f"the headers given: {', '.join(sorted(self.headers))}"
            if self.headers
            else "no headers were given"
        )
        return f"the server refused the credentials ({refusal}); {source}"

    def _failure_reason(self, exc: BaseException) -> str:
        if isinstance(exc, FileNotFoundError):
            return (
                f"command not found: {self.command}; check that it is on the kernel's PATH, "
                "or give its absolute path"
            )
        unreachable = _unreachable(exc) if self.url else ""
        if unreachable:
            return unreachable
        reason = exc_summary(exc)
        quote = stderr_quote(self.stderr_tail())
        if quote:
            reason += f" (server stderr: {quote})"
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
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    # -- Server protocol ---------------------------------------------------

    async def list_tools(self) -> list[ToolInfo]:
        """The server's tools (cached after the first listing)."""
        if self._tools is None:
            client = await self._live_client()
            tools: list[ToolInfo] = []
            withheld: dict[str, str] = {}
            cursor: str | None = None
            while True:
                result = await asyncio.wait_for(client.list_tools(cursor=cursor), self.call_timeout)
                for tool in result.tools:
                    if _task_support(tool) == "required":
                        withheld[tool.name] = TASK_REQUIRED
                        continue
                    tools.append(
                        ToolInfo(
                            server=self.name,
                            name=tool.name,
                            description=tool.description or "",
                            input_schema=dict(tool.input_schema or {"type": "object"}),
                            sequential=_destructive(tool),
                            read_only=_read_only(tool),
                        )
                    )
                cursor = result.next_cursor
                if not cursor:
                    break
            fitted = fit_listing(self.name, tools, self.listing_caps)
            self._tools, self.withheld = list(fitted.tools), withheld
            self.listing_notice = fitted.notice
        return list(self._tools)

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Call a tool; timeouts, crashes and protocol errors come back as error results."""
        if name in self.withheld:
            return ToolResult.error(f"{self.name}.{name} is not offered: {self.withheld[name]}")
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
            return ToolResult.timeout(f"{self.name}.{name} timed out after {self.call_timeout:g} s")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            summary = exc_summary(exc)
            kind = _failure_kind(exc)
            if kind == "lost":
                self._broken = summary
                quote = stderr_quote(self.stderr_tail())
                if quote:
                    summary += f" (server stderr: {quote})"
                return ToolResult.error(
                    f"MCP server {self.name} is gone ({summary}); it will be restarted on the next call"
                )
            if kind == "timeout":
                return ToolResult.timeout(
                    f"{self.name}.{name} timed out after {self.call_timeout:g} s"
                )
            return ToolResult.error(f"{self.name}.{name}: {self._take_refusal() or summary}")
        return tool_result(result, self.result_cap)

    @asynccontextmanager
    async def resource_updates(self, uri: str) -> AsyncIterator[AsyncIterator[Any] | None]:
        """The server's change signals for `uri`, or None if it offers none.

        Over the 2026 protocol, a `subscriptions/listen` stream; over the 2025 one,
        `resources/subscribe` and its `notifications/resources/updated`, when the
        server's capabilities say it takes subscriptions. Enter and exit it in one task.
        The signals carry no data: refetch on each one.
        """
        from mcp.client.subscriptions import ListenNotSupportedError

        client = await self._live_client()
        async with AsyncExitStack() as stack:
            try:
                sub = await stack.enter_async_context(client.listen(resource_subscriptions=[uri]))
            except ListenNotSupportedError:
                sub = None
            if sub is None:

                def alive() -> bool:
                    return self._client is client and self._broken is None

                legacy = subscribed(client, uri, self._signals, self.call_timeout, alive)
                yield await stack.enter_async_context(legacy)
            else:
                honored = sub.honored.resource_subscriptions if sub.honored else None
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


_SAYS_WHAT_WENT_WRONG = re.compile(
    r"error|exception|traceback|fatal|panic|fail|abort|killed|denied|refused|not found|"
    r"cannot|can't|unable|invalid|missing",
    re.IGNORECASE,
)
_QUOTED_LINES = 3


def stderr_quote(tail: str) -> str:
    """What of a server's stderr tail to quote in an error: from the last line that says
    what went wrong (an error, a traceback's last line) to the end, at most three lines;
    without one, the last three lines (so a start-up banner alone is not all one sees)."""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    for index in range(len(lines) - 1, -1, -1):
        if _SAYS_WHAT_WENT_WRONG.search(lines[index]):
            return " | ".join(lines[index : index + _QUOTED_LINES])
    return " | ".join(lines[-_QUOTED_LINES:])


async def _within(awaitable: Awaitable[_T], seconds: float) -> _T:
    """Await under a deadline, in the calling task where the Python version allows.

    `asyncio.wait_for` (before 3.12) runs the awaitable as a task of its own: about 50 µs
    more per tool call, some 4% of a stdio round trip. `asyncio.timeout` (3.11+) does not.
    """
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)


def _task_support(tool: Any) -> str:
    """A listed tool's execution.taskSupport ("forbidden" when absent)."""
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None) or "forbidden"


async def _refusal(response: Any) -> str:
    """'HTTP 401: <the server's message>' for a response that refused the credentials.

    The message is the body's `error_description`, `message` or `error` (JSON), else its
    first line, else the challenge's `error_description`; bounded, control characters out.
    """
    message = ""
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) <= _REFUSAL_BODY:
        try:
            message = _body_message(await response.aread())
        except Exception:  # a body that cannot be read leaves the status, which says enough
            message = ""
    if not message:
        found = re.search(
            r'error_description="([^"]*)"', response.headers.get("www-authenticate", "")
        )
        message = found.group(1) if found else ""
    message = re.sub(r"[\x00-\x1f\x7f]+", " ", message).strip()[:_REFUSAL_TEXT]
    return f"HTTP {response.status_code}" + (f": {message}" if message else "")


def _body_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text.splitlines()[0] if text else ""
    if isinstance(data, dict):
        if isinstance(data.get("error"), dict):
            data = data["error"]
        for key in ("error_description", "message", "error"):
            value = data.get(key)
            if isinstance(value, str):
                return value
    return ""


def _bare_url(url: str) -> str:
    """The URL's scheme, host, port and path: no user, password, query or fragment."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url


def _causes(exc: BaseException) -> list[BaseException]:
    """Every exception under `exc`: the leaves of its groups and each one's causes."""
    found: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.append(current)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return found


def _unreachable(exc: BaseException) -> str:
    """Why an HTTP server could not be reached, and what to check ("": it was reached)."""
    import socket

    import httpx2

    causes = _causes(exc)
    if any(isinstance(e, ConnectionRefusedError) for e in causes):
        return (
            "connection refused: nothing listens at that host and port; check that the server "
            "runs and that the URL's host and port are right"
        )
    if any(isinstance(e, socket.gaierror) for e in causes):
        return "the host name does not resolve; check the URL's host"
    if any(isinstance(e, (TimeoutError, httpx2.TimeoutException)) for e in causes):
        return (
            "the connection timed out; check that the host is up and that no firewall "
            "drops the connection"
        )
    if any(isinstance(e, OSError) for e in causes):
        return f"could not connect ({exc_summary(exc)}); check that the server runs at that URL"
    return ""


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


def _new_errlog() -> TextIO:
    return tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")


def _read_only(tool: Any) -> bool:
    """Whether the server's annotations say the tool changes nothing (`readOnlyHint: true`;
    the hint's default, false, is taken: a tool is read-only only when its server says so)."""
    annotations = getattr(tool, "annotations", None)
    return getattr(annotations, "read_only_hint", None) is True


def _destructive(tool: Any) -> bool:
    """Whether the server's annotations say the tool is destructive (`destructiveHint: true`):
    such a tool runs alone. The hint's default (true) is not taken: a server that says
    nothing about its tools would otherwise run every call one by one."""
    annotations = getattr(tool, "annotations", None)
    return getattr(annotations, "destructive_hint", None) is True
