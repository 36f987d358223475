"""`core.inbox`: the task store's inbox as a kernel reads and answers it (the board's source)."""

from __future__ import annotations

import getpass
from collections.abc import Callable

from ollie_nb.errors import TaskServerError
from ollie_nb.planning import InboxRequest, TaskClient


class NoInbox(TaskServerError):
    """No task server is wired, or the one wired keeps no inbox (an ollie-tasks extension)."""


class CoreInbox:
    """Lists and answers the requests of the wired task store's inbox; answers record the
    name given, else this machine's user (over HTTP the server records the token's user)."""

    def __init__(self, client: Callable[[], TaskClient | None]) -> None:
        self._client = client

    @property
    def available(self) -> bool:
        """Whether the wired task server keeps an inbox."""
        client = self._client()
        return client is not None and client.caps.inbox

    def _wired(self) -> TaskClient:
        client = self._client()
        if client is None:
            raise NoInbox("no task server is wired (see %ollie mcp)")
        if not client.caps.inbox:
            raise NoInbox(f"the task server {client.server!r} keeps no inbox")
        return client

    async def open(self) -> list[InboxRequest]:
        """The requests that wait on an answer, oldest first."""
        return await self._wired().inbox("open")

    async def requests(self, state: str = "all") -> list[InboxRequest]:
        """The requests in `state`: open, answered, expired or all."""
        return await self._wired().inbox(state)

    async def answer(self, request: str, answer: str, by: str = "") -> None:
        """Answer a request once: allow, deny, stop or raise:<amount> (TaskServerError with
        the store's reason when refused: answered already, timed out, unknown)."""
        await self._wired().answer(request, answer, by or _local_user())


def _local_user() -> str:
    """This machine's user name, '' when it cannot be told."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
