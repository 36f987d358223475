"""The HTTP face's guard: a bearer token on every request, and the bind-address check."""

from __future__ import annotations

import hmac
import ipaddress
import json

from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV_VAR = "OLLIE_TASKS_TOKEN"
"""Environment variable holding the bearer token `serve --http` requires."""

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True when `host` only accepts connections from this machine."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class RequireBearer:
    """ASGI middleware: an HTTP request without `Authorization: Bearer <token>` gets 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            body = json.dumps({"error": "missing or wrong bearer token"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="ollie-tasks"'),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        given = b""
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                given = value
        return hmac.compare_digest(given, self._expected)
