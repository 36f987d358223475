"""Event-driven planning: read the task server's events as soon as it signals a change.

PLANNING.md's next step: instead of polling its plan, the agent is told when a
blocked step becomes ready, when a step is assigned to it, and when someone else
finishes one of its steps. This watcher subscribes to the server's `tasks://events`
resource (MCP subscriptions/listen) and reads `task_events(since=...)` on each
signal; a server that offers no subscription is polled every `interval` seconds.
What the events lead to is decided by `_react.Reactions`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, Protocol, TypeVar

from ollie_nb.core._tool_servers import ToolServers
from ollie_nb.errors import NoTaskServerError
from ollie_nb.planning import EVENTS_URI, TaskClient

log = logging.getLogger("ollie_nb.core")

PAGE = 200  # events per read at most; ollie-tasks also bounds a page by size
START_TIMEOUT = 10.0
LOG_SIZE = 50

Updates = Callable[[str], AbstractAsyncContextManager["AsyncIterator[Any] | None"]]


class EventReactions(Protocol):
    """What the events lead to: the agent's watch (core/_react.py) or the board's feed."""

    async def catch_up(self) -> list[str]: ...
    async def react(self, events: Sequence[dict[str, Any]]) -> list[str]: ...
    def own_update(self, task_id: str, status: str) -> list[str]: ...


R = TypeVar("R", bound=EventReactions)


class TaskEventWatcher(Generic[R]):
    """Reads `task_events` on each change signal (or every `interval` s without one)."""

    def __init__(
        self,
        client: TaskClient,
        reactions: R,
        interval: float = 2.0,
        updates: Updates | None = None,
    ) -> None:
        self.client = client
        self.server = client.server
        self.reactions = reactions
        self.interval = max(0.1, interval)
        self._updates = updates
        self.mode = "starting"  # then "subscribed" or "polling"
        self.seq = 0
        self.log: deque[str] = deque(maxlen=LOG_SIZE)
        self._lock = asyncio.Lock()
        self._listening = asyncio.Event()  # set once the mode is known
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_env(cls, env: ToolServers, reactions: R, interval: float = 2.0) -> TaskEventWatcher[R]:
        """A watcher of the env's task server; a NoTaskServerError says why there can be none."""
        client = env.task_client
        if not env.task_server or client is None:
            raise NoTaskServerError("no task server is wired (see the agent's mcpServers)")
        if not client.caps.events:
            raise NoTaskServerError(f"the task server '{env.task_server}' has no event log")
        server = env.dispatcher.get_server(env.task_server)
        updates = getattr(server, "resource_updates", None)
        return cls(client, reactions, interval, updates)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Begin at the server's newest event, queue the steps ready now, then watch."""
        await self._to_end()
        await self.stop()
        self._listening.clear()
        self._task = asyncio.create_task(self._run(), name="ollie-task-events")
        try:  # subscribed before the ready steps are queued: no change falls in between
            await asyncio.wait_for(self._listening.wait(), START_TIMEOUT)
        except asyncio.TimeoutError:
            log.warning("task events: no subscription within %g s; going on", START_TIMEOUT)
        self.log.extend(await self.reactions.catch_up())

    async def _to_end(self) -> None:
        """Move `seq` to the log's end: one read from its end, or page to it (a server
        that cannot read from the end)."""
        head = await self.client.head()
        if head is not None:
            self.seq = max(self.seq, head)
            return
        more = True
        while more:
            _, more = await self._fetch()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                if self._updates is not None and await self._listen(self._updates):
                    continue  # the stream ended: listen again (and read what was missed)
                await self._poll_forever()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a lost stream or a bad answer must not end the watch
                self.log.append(f"task events: {exc}")
                log.warning("task events: %s", exc)
                self._listening.set()
                await asyncio.sleep(self.interval)
                await self.safe_poll()  # until the stream is back, poll

    async def _listen(self, updates: Updates) -> bool:
        """Read events on each signal; False when the server offers no subscription."""
        async with updates(EVENTS_URI) as signals:
            if signals is None:
                return False
            self.mode = "subscribed"
            self._listening.set()
            await self.poll()  # whatever happened before the subscription was acknowledged
            async for _ in signals:
                await self.poll()
        return True

    async def _poll_forever(self) -> None:
        self.mode = "polling"
        self._listening.set()
        while True:
            await self.safe_poll()
            await asyncio.sleep(self.interval)

    def own_update(self, task_id: str, status: str) -> None:
        """The agent itself updated a task (and the server said ok)."""
        self.log.extend(self.reactions.own_update(task_id, status))

    @property
    def reading(self) -> bool:
        """A read of the events is under way."""
        return self._lock.locked()

    async def catch_up(self) -> None:
        """Be current now: polling, read the events; subscribed, let a read under way finish."""
        if self.mode != "subscribed":
            await self.safe_poll()
            return
        async with self._lock:
            pass  # a signal not read yet is read by the watch loop itself

    async def safe_poll(self) -> list[str]:
        """`poll`, with a failure logged rather than raised."""
        try:
            return await self.poll()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.log.append(f"could not read task events: {exc}")
            log.warning("task events: %s", exc)
            return []

    async def _fetch(self) -> tuple[list[dict[str, Any]], bool]:
        """The next page of events, and whether more follow; `seq` moves past the page.

        A page that does not parse (a server whose pages outgrow the result cap) is asked
        for again with half the limit; a single event that still does not parse is skipped,
        with a log line, so the watch never stalls on it.
        """
        limit = PAGE
        while True:
            try:
                page = await self.client.events(self.seq, limit)
            except ValueError as exc:
                if limit > 1:
                    limit //= 2
                    continue
                self.log.append(f"task events: skipped the event after seq {self.seq}: {exc}")
                log.warning("task events: skipped the event after seq %d: %s", self.seq, exc)
                self.seq += 1
                return [], False  # the rest at the next signal: a broken server cannot loop us
            before = self.seq
            if page.events:
                self.seq = max(self.seq, page.events[-1]["seq"])
            if page.next is not None:
                self.seq = max(self.seq, page.next)
            return page.events, page.more and self.seq > before  # on only while it moves

    async def poll(self) -> list[str]:
        """Read the new events once; return what they led to (also kept in `log`)."""
        async with self._lock:  # the loop and a catch-up must not read the same events twice
            events: list[dict[str, Any]] = []
            more = True
            while more:
                page, more = await self._fetch()
                events.extend(page)
            lines = await self.reactions.react(events) if events else []
        self.log.extend(lines)
        return lines
