"""The board's feed: the task store's plans, read again when its event log moves.

It reads the events as the agent's watch does (core/_event_reader.py: on each change
signal where the server has subscriptions, by polling otherwise), folds them into the
board's claim log, and re-reads the store's listing (with its inbox's open requests:
`inbox.asked` and `inbox.answered` are events like any other) at most once per `gap` seconds
however many events came (coalesced). Between reads it posts the same board again
each `clock` seconds while a step is claimed, so running times and leases count down.
Every board is handed to `post` on the runtime's loop; the notebook moves it to the
kernel's thread.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ollie_nb.core._event_reader import TaskEventWatcher
from ollie_nb.core._tool_servers import ToolServers
from ollie_nb.errors import NoTaskServerError
from ollie_nb.planning import Spend, TaskClient
from ollie_nb.planning._board import BoardFilter, BoardPlan, ClaimLog, board_of
from ollie_nb.planning._client import Task
from ollie_nb.planning._inbox import InboxRequest

GAP = 0.25  # seconds between two reads of the store at least: at most 4 boards a second
CLOCK = 1.0  # seconds between re-posts of the figures while a step is claimed
HISTORY = 1000  # events read at the start, for the claims made before the board opened


@dataclass(frozen=True)
class Board:
    """One state of the board: its plans, the time it was figured, the log's seq it shows."""

    plans: tuple[BoardPlan, ...]
    at: float
    seq: int
    reads: int  # the store's listings read so far (the coalescing's count)
    failure: str = ""  # why the last read of the store failed ('' when it did not)
    inbox: tuple[InboxRequest, ...] = ()  # the inbox's open requests (of the goal shown)


class BoardFeed:
    """Follows one task store for one board (see the module docstring)."""

    def __init__(
        self,
        client: TaskClient,
        which: BoardFilter,
        post: Callable[[Board], None],
        *,
        spend: Callable[[], Mapping[str, Spend]] = dict,
        gap: float = GAP,
        clock: float = CLOCK,
    ) -> None:
        self.client, self.which, self._post, self._spend = client, which, post, spend
        self.gap, self.clock = gap, clock
        self.log = ClaimLog()
        self.reads = 0
        self.failure = ""  # why the last read failed ('' when it did not)
        self._tasks: list[Task] = []
        self._inbox: tuple[InboxRequest, ...] = ()
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.watcher: TaskEventWatcher[BoardFeed] | None = None

    async def start(self, watcher: TaskEventWatcher[BoardFeed] | None) -> Board:
        """Read the recent claims and the store, post the first board, then follow `watcher`
        (its reactions: this feed); None: the store has no event log, one board only."""
        if self.client.caps.events:
            self.log.fold(await self.client.newest(HISTORY))
        board = await self._read()
        self.watcher = watcher
        if watcher is not None:
            await watcher.start()
            self._task = asyncio.create_task(self._follow(), name="ollie-board")
        return board

    async def retry(self, step_id: str) -> list[str]:
        """Reopen a failed or skipped step and those waiting on it (the board's Retry): the
        ids reopened; the board follows the change as any other."""
        return await self.client.retry(step_id, note="retried from the board")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self.watcher is not None:
            await self.watcher.stop()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    # The event reader's reactions: the board only marks itself stale.
    async def catch_up(self) -> list[str]:
        return []

    async def react(self, events: Sequence[dict[str, Any]]) -> list[str]:
        self.log.fold(events)
        self._dirty.set()
        return []

    def own_update(self, task_id: str, status: str) -> list[str]:
        self._dirty.set()
        return []

    def refresh(self) -> None:
        """Read the store again soon (an answer given from the board); loop thread only."""
        self._dirty.set()

    async def _follow(self) -> None:
        """Read the store when events came, at most once per `gap`; else re-post the figures."""
        while True:
            try:
                await asyncio.wait_for(self._dirty.wait(), self.clock)
            except asyncio.TimeoutError:
                self._repost()
                continue
            self._dirty.clear()
            try:
                await self._read()
            except Exception as exc:  # a failed read must not end the board: the next event retries
                self.failure = f"could not read the store: {exc}"
                self._repost(force=True)  # the last plans read, with the line saying why
            await asyncio.sleep(self.gap)

    async def _read(self) -> Board:
        self._tasks = await self.client.tasks()
        if self.client.caps.inbox:
            found = await self.client.inbox("open")
            goal = self.which.goal
            self._inbox = tuple(r for r in found if not goal or r.goal == goal)
        self.reads, self.failure = self.reads + 1, ""
        return self._repost(force=True)

    def _repost(self, force: bool = False) -> Board:
        """Figure the board from the last listing at the time now, and post it (unless nothing
        is claimed and nothing was read: the same board again)."""
        plans = board_of(self._tasks, self.log, time.time(), self.which, self._spend())
        board = Board(
            tuple(plans), time.time(), self.log.seq, self.reads, self.failure, self._inbox
        )
        if force or any(p.holdings for p in plans):
            self._post(board)
        return board


def board_feed(
    env: ToolServers | None,
    which: BoardFilter,
    post: Callable[[Board], None],
    interval: float = 2.0,
    spend: Callable[[], Mapping[str, Spend]] = dict,
) -> tuple[BoardFeed, TaskEventWatcher[BoardFeed] | None]:
    """A feed of the env's task server and the event reader it follows (None: no event log);
    a NoTaskServerError says why there can be none."""
    if env is None or env.task_client is None:
        raise NoTaskServerError("no task server is wired (see the agent's mcpServers)")
    feed = BoardFeed(env.task_client, which, post, spend=spend)
    if not env.task_client.caps.events:
        return feed, None
    return feed, TaskEventWatcher.for_env(env, feed, interval)
