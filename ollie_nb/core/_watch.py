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
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from ollie_nb.core._env import AgentEnv
from ollie_nb.core._react import Reactions
from ollie_nb.errors import NoTaskServerError
from ollie_nb.planning import TaskClient

log = logging.getLogger("ollie_nb.core")

PAGE = 200  # events per read; a page must stay well under the tool-result cap
START_TIMEOUT = 10.0
LOG_SIZE = 50
EVENTS_URI = "tasks://events"  # the resource ollie-tasks signals on every change

Updates = Callable[[str], AbstractAsyncContextManager["AsyncIterator[Any] | None"]]


class TaskEventWatcher:
    """Reads `task_events` on each change signal (or every `interval` s without one)."""

    def __init__(
        self,
        client: TaskClient,
        reactions: Reactions,
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
    def for_env(
        cls, env: AgentEnv, reactions: Reactions, interval: float = 2.0
    ) -> TaskEventWatcher:
        """A watcher of the env's task server; a NoTaskServerError says why there can be none."""
        if not env.task_server:
            raise NoTaskServerError("no task server is wired (see the agent's mcpServers)")
        if "task_events" not in env.servers[env.task_server].tools:
            raise NoTaskServerError(f"the task server '{env.task_server}' has no task_events tool")
        server = env.dispatcher.get_server(env.task_server)
        updates = getattr(server, "resource_updates", None)
        assert env.task_client is not None  # wired with the task server
        return cls(env.task_client, reactions, interval, updates)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Begin at the server's newest event, queue the steps ready now, then watch."""
        while len(page := await self._fetch()) == PAGE:
            self.seq = page[-1]["seq"]
        if page:
            self.seq = page[-1]["seq"]
        await self.stop()
        self._listening.clear()
        self._task = asyncio.create_task(self._run(), name="ollie-task-events")
        try:  # subscribed before the ready steps are queued: no change falls in between
            await asyncio.wait_for(self._listening.wait(), START_TIMEOUT)
        except asyncio.TimeoutError:
            log.warning("task events: no subscription within %g s; going on", START_TIMEOUT)
        self.log.extend(await self.reactions.catch_up())

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

    async def _fetch(self) -> list[dict[str, Any]]:
        return await self.client.events(self.seq, PAGE)

    async def poll(self) -> list[str]:
        """Read the new events once; return what they led to (also kept in `log`)."""
        async with self._lock:  # the loop and a catch-up must not read the same events twice
            events: list[dict[str, Any]] = []
            while True:
                page = await self._fetch()
                events.extend(page)
                if page:
                    self.seq = max(self.seq, page[-1]["seq"])
                if len(page) < PAGE:
                    break
            lines = await self.reactions.react(events) if events else []
        self.log.extend(lines)
        return lines
