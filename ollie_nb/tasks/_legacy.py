"""resources/subscribe for clients of the 2025 protocol, from the same change signal.

2026 clients open `subscriptions/listen` streams (the SDK's subscription bus); 2025
clients (the MCP SDK 1.x, the Inspector's default mode, the TypeScript SDK 1.x) send
`resources/subscribe` and expect `notifications/resources/updated`. MCPServer has no
public hook for these two methods (they left the protocol in 2026), so they go to its
low-level server, whose capabilities then say `resources.subscribe: true` to 2025 clients.
"""

from __future__ import annotations

from typing import Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.types import INVALID_PARAMS, EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams


class Subscribers:
    """The 2025 clients subscribed to one resource: one session per connection."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._sessions: dict[int, ServerSession] = {}

    def remember(self, session: ServerSession) -> None:
        """A client subscribed: notify its connection of each change."""
        self._sessions[_connection_key(session)] = session

    def forget(self, session: ServerSession) -> None:
        """That client unsubscribed, or its connection is gone."""
        self._sessions.pop(_connection_key(session), None)

    async def notify(self) -> None:
        """Send `notifications/resources/updated` to every subscribed connection."""
        for session in list(self._sessions.values()):
            try:
                await session.send_resource_updated(self.uri)
            except Exception:  # a connection that went away: it gets no more signals
                self.forget(session)

    def serve(self, server: MCPServer) -> None:
        """Answer resources/subscribe and /unsubscribe of `server` for this resource."""

        async def subscribe(
            ctx: ServerRequestContext[Any], params: SubscribeRequestParams
        ) -> EmptyResult:
            if str(params.uri) != self.uri:
                raise MCPError(INVALID_PARAMS, f"only {self.uri} can be subscribed to")
            self.remember(ctx.session)
            return EmptyResult()

        async def unsubscribe(
            ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams
        ) -> EmptyResult:
            self.forget(ctx.session)
            return EmptyResult()

        lowlevel = server._lowlevel_server  # private: see the module's docstring
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
        lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


def _connection_key(session: ServerSession) -> int:
    """The same key for every request's session of one connection.

    The SDK makes a ServerSession per request, each holding its connection (which its
    notifications go to); it does not expose that connection, hence the private name.
    """
    return id(getattr(session, "_connection", session))
