"""Waker: while the watch is on, the agent starts a turn by itself when work is queued and it is idle.

One asyncio task waits for a kick (a prompt was queued, a turn ended) and asks the
agent to run its queue. A turn that fails or is interrupted ends the wake-ups, with
one clear message, rather than a loop of failing turns.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ollie_nb.core._events import TurnResult

log = logging.getLogger("ollie_nb.core")


class Waker:
    """Runs `run_queued()` after each kick; `ended(reason)` is called once if a turn goes wrong."""

    def __init__(
        self,
        run_queued: Callable[[], Awaitable[TurnResult | None]],
        ended: Callable[[str], None],
    ) -> None:
        self._run_queued = run_queued
        self._ended = ended
        self._kick = asyncio.Event()
        self.working = False
        self.turns = 0
        self._stopping = False
        self._task = asyncio.create_task(self._loop(), name="ollie-wake")

    def kick(self) -> None:
        """Something may be waiting: look at the queue soon."""
        self._kick.set()

    @property
    def idle(self) -> bool:
        """Nothing running or about to run on our account."""
        return not self.working and not self._kick.is_set()

    @property
    def running(self) -> bool:
        return not self._task.done()

    async def _loop(self) -> None:
        while True:
            await self._kick.wait()
            self._kick.clear()
            self.working = True
            try:
                result = await self._run_queued()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never a crash, never a loop of failures
                log.exception("a turn started by the watch raised")
                self._ended(f"a turn the agent started itself failed: {exc}")
                return
            finally:
                self.working = False
            if self._stopping:
                return
            if result is None:
                continue
            self.turns += 1
            if result.error or result.interrupted:
                why = f"failed: {result.error}" if result.error else "was interrupted"
                self._ended(f"a turn the agent started itself {why}")
                return

    async def stop(self) -> None:
        """End the wake-ups; a turn under way is let finish (interrupt it first to end it now)."""
        if self._task is asyncio.current_task() or self._task.done():
            return
        self._stopping = True
        if not self.working:
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
