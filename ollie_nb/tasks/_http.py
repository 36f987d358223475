"""The HTTP face's guard: a bearer token on every request naming its user, the tokens file,
and the bind-address check."""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import re
from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from ollie_nb.tasks._errors import StoreError

TOKEN_ENV_VAR = "OLLIE_TASKS_TOKEN"
"""Environment variable holding the bearer token `serve --http` requires."""

USER_KEY = "ollie_tasks.user"
"""Key of the ASGI scope under which the guard leaves the request's user ('' unnamed)."""

MIN_TOKEN_CHARS = 16
"""The shortest token a tokens file may give a user."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,99}")
"""A user's name in a tokens file: what an assignee can be, and nothing a terminal acts on."""

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True when `host` only accepts connections from this machine."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def request_user(request: object) -> str:
    """The user the guard found for an HTTP request ('' over stdio, or for an unnamed token)."""
    scope = getattr(request, "scope", None)
    return str(scope.get(USER_KEY, "")) if isinstance(scope, Mapping) else ""


def read_tokens_file(path: str) -> dict[str, str]:
    """The users of a tokens file (`name token` per line, `#` comments) as token -> name."""
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as file:
            lines = file.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(
            f"cannot read --tokens {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    users: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"--tokens {path} line {number}"
        if len(fields) != 2 or not _NAME.fullmatch(fields[0]):
            raise StoreError(f"{where}: write `name token` (a name of letters, digits, ._@-)")
        name, token = fields
        if len(token) < MIN_TOKEN_CHARS:
            raise StoreError(
                f"{where}: {name}'s token is shorter than {MIN_TOKEN_CHARS} characters"
            )
        if token in users or name in users.values():
            raise StoreError(f"{where}: {name} or its token is given twice")
        users[token] = name
    if not users:
        raise StoreError(f"--tokens {path} names no user: write one `name token` per line")
    return users


class RequireBearer:
    """ASGI middleware: an HTTP request without `Authorization: Bearer <token>` of a known
    user gets 401; the others go on with their user's name in the scope (`USER_KEY`)."""

    def __init__(self, app: ASGIApp, users: Mapping[str, str]) -> None:
        self._app = app
        self._users = [(f"Bearer {token}".encode(), name) for token, name in users.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = self._user(scope) if scope["type"] == "http" else ""
        if scope["type"] == "http" and user is None:
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
        await self._app({**scope, USER_KEY: user or ""}, receive, send)

    def _user(self, scope: Scope) -> str | None:
        """The name of the user whose token the request carries, None for no known token."""
        given = b""
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                given = value
        found: str | None = None
        for expected, user in self._users:  # every one compared: the time tells nothing
            if hmac.compare_digest(given, expected):
                found = user
        return found
