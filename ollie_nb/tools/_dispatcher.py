"""The one path every tool call takes: route by server name, never raise for a tool failure."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ollie_nb.tools._bounds import DEFAULT_RESULT_CAP, cap_text, clean_arguments
from ollie_nb.tools._types import Server, ToolInfo, ToolResult

if sys.version_info < (3, 11):  # Python 3.10
    from exceptiongroup import BaseExceptionGroup

log = logging.getLogger("ollie_nb.tools")


class Dispatcher:
    """Routes tool calls to servers by name; built-in and MCP servers are equals here.

    It is also where every result is bounded: `result_cap` characters (head and tail
    kept) enter the history, whichever server answered; `redact` runs on the whole
    text first, so a secret at the cut cannot leave half of itself behind.
    """

    def __init__(
        self, *, result_cap: int = DEFAULT_RESULT_CAP, redact: Callable[[str], str] | None = None
    ) -> None:
        self._servers: dict[str, Server] = {}
        self.result_cap = result_cap
        self.redact = redact

    def add_server(self, name: str, server: Server) -> None:
        """Register `server` under `name`, replacing any server of that name."""
        self._servers[name] = server

    def get_server(self, name: str) -> Server | None:
        return self._servers.get(name)

    def remove_server(self, name: str) -> Server | None:
        """Unregister and return the server (the caller closes it)."""
        return self._servers.pop(name, None)

    @property
    def server_names(self) -> list[str]:
        return list(self._servers)

    async def list_tools(self) -> list[ToolInfo]:
        """All servers' tools, in server order; a server that cannot list is skipped and logged."""
        names = list(self._servers)
        results = await asyncio.gather(
            *(self._servers[n].list_tools() for n in names), return_exceptions=True
        )
        tools: list[ToolInfo] = []
        for name, result in zip(names, results):
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                log.warning("server %s could not list its tools: %s", name, result)
                continue
            tools.extend(result)
        return tools

    async def find_tool(self, tool: str) -> ToolInfo | None:
        """The first server's entry for `tool`, in server order."""
        for info in await self.list_tools():
            if info.name == tool:
                return info
        return None

    async def dispatch(self, server: str, tool: str, args: dict[str, Any]) -> ToolResult:
        """Call `tool` on `server`; errors become error results, and the result is capped."""
        result = await self._call(server, tool, args)
        whole = result.text if self.redact is None else self.redact(result.text)
        text = cap_text(whole, self.result_cap)
        return result if text is result.text else replace(result, text=text)

    async def _call(self, server: str, tool: str, args: dict[str, Any]) -> ToolResult:
        """Route one call; unknown servers and server exceptions become error results."""
        target = self._servers.get(server)
        if target is None:
            known = ", ".join(sorted(self._servers)) or "none"
            return ToolResult.error(f"no tool server named {server!r} (servers: {known})")
        if not isinstance(args, dict):
            return ToolResult.error(
                f"arguments for {tool} must be a JSON object, got {type(args).__name__}"
            )
        try:
            return await target.call_tool(tool, clean_arguments(args))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a server bug must not take the turn down
            log.exception("tool %s.%s raised", server, tool)
            return ToolResult.error(f"{server}.{tool} failed: {exc_summary(exc)}")

    async def aclose(self) -> None:
        """Close every server concurrently; errors are logged, not raised."""
        servers = list(self._servers.items())
        self._servers.clear()
        results = await asyncio.gather(*(s.aclose() for _, s in servers), return_exceptions=True)
        for (name, _), result in zip(servers, results):
            if isinstance(result, Exception):
                log.warning("closing server %s: %s", name, exc_summary(result))


def exc_summary(exc: BaseException) -> str:
    """One line for an exception, digging the first leaf out of (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
