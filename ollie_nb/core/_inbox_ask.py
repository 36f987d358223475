"""A kernel's sub-agents and watch ask in two places at once: the kernel's own approver
(the notebook's widget) and the task store's inbox. The first answer wins.

`AskedBeside` composes the two; the gate calls it like any approver. A call of a turn
that works a stored step on behalf of a sub-agent or the watch (its StepScope names an
asker), with a store that keeps an inbox, is asked in both: answered in the inbox (a
board, `%ollie inbox`, the CLI), the kernel's widget closes showing who answered;
answered in the widget, the inbox request is answered too (as this machine's user), so
no board shows it open. The agent's own turn, and a store without an inbox: the kernel's
approver alone, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ollie_nb.core._inbox_handle import _local_user
from ollie_nb.core._routing import Approver, ScopedApprover, StepScope
from ollie_nb.errors import OllieError
from ollie_nb.planning import TaskClient

WHAT_CHARS = 300  # characters of a call's (masked) arguments shown in its request
ANSWER_MARGIN = 2.0  # s past the request's deadline before the asker stops looking


def request_what(name: str, args: dict[str, Any]) -> str:
    """A call as an inbox request shows it: its name and its arguments as the approver got
    them (secret-looking values already masked by the gate), cut to WHAT_CHARS."""
    shown = json.dumps(args, ensure_ascii=False, default=str)
    return f"{name} {shown}"[:WHAT_CHARS]


@dataclass(frozen=True)
class Verdict:
    """An approval's answer: allowed or not, and whether it came from the inbox (and who)."""

    allowed: bool
    elsewhere: bool = False  # answered in the inbox, not by the kernel's own approver
    by: str = ""  # who answered in the inbox ('' when unnamed, or answered locally)


Elsewhere = Callable[[], Awaitable[Verdict | None]]
"""Asks the inbox and waits: its Verdict once answered there, None if it never will be."""


class SharedApprover(ABC):
    """A kernel's own approver that can ask while the inbox is asked too (the first answer
    wins): `elsewhere` is started only when a person is asked, not for an answer the
    approver gives by itself (a mode, an allowance for the session)."""

    @abstractmethod
    async def __call__(self, name: str, args: dict[str, Any]) -> bool:
        """Ask here alone (the agent's own turn)."""

    @abstractmethod
    async def ask_beside(self, name: str, args: dict[str, Any], elsewhere: Elsewhere) -> Verdict:
        """Ask here and, once a person is asked, in the inbox through `elsewhere`."""

    @abstractmethod
    def answer_time(self) -> float:
        """Seconds an unanswered request waits before it is denied (the inbox's timeout)."""


class AskedBeside(ScopedApprover):
    """The kernel's approver, with the inbox asked beside it for sub-agents and the watch."""

    def __init__(
        self,
        local: SharedApprover,
        client: Callable[[], TaskClient | None],
        owner: Callable[[], str],
        user: Callable[[], str] = _local_user,
    ) -> None:
        self.local, self._client, self._owner, self._user = local, client, owner, user
        self._closing: set[asyncio.Future[bool]] = set()  # requests denied after a Stop

    async def ask(self, name: str, args: dict[str, Any], scope: StepScope | None) -> bool:
        """Both places for a sub-agent's or the watch's step turn, else the kernel's alone."""
        client = self._client()
        if scope is None or not scope.asker or client is None or not client.caps.inbox:
            return await self.local(name, args)
        asker = f"{self._owner()}/{scope.asker}"
        request = InboxRequestOf(client, request_what(name, args), asker, scope)
        try:
            verdict = await self.local.ask_beside(
                name, args, lambda: request.answer(self.local.answer_time())
            )
        except asyncio.CancelledError:  # Stop: no board keeps asking what no one waits on
            self._closing.add(asyncio.ensure_future(request.close(False, self._user())))
            self._closing = {task for task in self._closing if not task.done()}
            raise
        if verdict.elsewhere:
            return verdict.allowed
        return await request.close(verdict.allowed, self._user())


class InboxRequestOf:
    """One call's inbox request: asked once, waited on, or answered from the kernel."""

    def __init__(self, client: TaskClient, what: str, asker: str, scope: StepScope) -> None:
        self.client, self.what, self.asker, self.scope = client, what, asker, scope
        self._asked: asyncio.Future[str] | None = None

    async def answer(self, timeout: float) -> Verdict | None:
        """Ask the inbox, then wait for its answer; None if it fails or is never answered."""
        self._asked = asyncio.ensure_future(
            self.client.ask(
                "approval",
                self.what,
                self.asker,
                goal=self.scope.goal,
                step=self.scope.task,
                timeout=timeout,
            )
        )
        try:  # shielded: a request asked as the widget is answered is still closed after
            request = await asyncio.shield(self._asked)
            row = await self.client.wait_answer(request, timeout + ANSWER_MARGIN)
        except (OllieError, ValueError):  # no inbox after all, an unreadable page
            return None
        if row is None or row.state != "answered":
            return None
        return Verdict(row.allowed, elsewhere=True, by=row.answered_by)

    async def close(self, allowed: bool, by: str) -> bool:
        """Answer the request with the kernel's answer, so no board shows it open; when
        someone answered it first, theirs counts (the first answer wins)."""
        if self._asked is None:
            return allowed  # never asked: the kernel answered without a person
        try:
            request = await self._asked
        except (OllieError, ValueError):
            return allowed  # the inbox could not be asked: the kernel's answer alone
        try:
            await self.client.answer(request, "allow" if allowed else "deny", by)
        except OllieError:  # answered (or expired) in the meantime: the store's word counts
            with contextlib.suppress(OllieError, ValueError):
                rows = await self.client.inbox("all", [request])
                if rows and rows[0].state == "answered":
                    return rows[0].allowed
        return allowed


def beside_inbox(
    approve: Approver | None,
    client: Callable[[], TaskClient | None],
    owner: Callable[[], str],
) -> Approver | None:
    """`approve` with the inbox asked beside it when it can share (a SharedApprover)."""
    if isinstance(approve, SharedApprover):
        return AskedBeside(approve, client, owner)
    return approve
