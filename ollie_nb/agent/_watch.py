"""Event-driven planning: task server events become queued step prompts.

PLANNING.md's next step: instead of polling its plan, the agent is told when a
blocked step becomes ready (its last blocker is done) and when someone else
finishes one of its steps. This watcher reads the wired task server's
`task_events(since=...)` (any server with that tool works), queues one step
prompt per newly ready step of a plan the agent made, and keeps a short log.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ollie_nb.agent._core import AgentCore

log = logging.getLogger("ollie_nb.agent")

PAGE = 1000
LOG_SIZE = 50


class TaskEventWatcher:
    """Polls `task_events` every `interval` seconds while started; queues ready steps."""

    def __init__(self, core: AgentCore, interval: float = 2.0) -> None:
        self.core = core
        self.interval = max(0.1, interval)
        self.seq = 0
        self.log: deque[str] = deque(maxlen=LOG_SIZE)
        self._queued: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        self.server = ""

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Begin at the server's newest event (history is not replayed), then poll."""
        env = self.core.env
        if env is None or not env.task_server:
            raise RuntimeError("no task server is wired (see the agent's mcpServers)")
        if "task_events" not in env.servers[env.task_server].tools:
            raise RuntimeError(f"the task server '{env.task_server}' has no task_events tool")
        self.server = env.task_server
        while len(page := await self._fetch()) == PAGE:
            self.seq = page[-1]["seq"]
        if page:
            self.seq = page[-1]["seq"]
        await self.stop()
        self._task = asyncio.create_task(self._run(), name="ollie-task-events")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                await self.poll()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bad answer must not end the watch
                self.log.append(f"could not read task events: {exc}")
                log.warning("task events: %s", exc)
            await asyncio.sleep(self.interval)

    async def _fetch(self) -> list[dict[str, Any]]:
        assert self.core.env is not None
        result = await self.core.env.dispatcher.dispatch(
            self.server, "task_events", {"since": self.seq, "limit": PAGE}
        )
        if result.is_error:
            raise RuntimeError(result.text.splitlines()[0] if result.text else "task_events failed")
        events = json.loads(result.text)
        if not isinstance(events, list):
            raise RuntimeError("task_events did not answer a JSON list")
        return [e for e in events if isinstance(e, dict) and isinstance(e.get("seq"), int)]

    async def poll(self) -> list[str]:
        """Read new events once; return what they led to (also kept in `log`).

        Steps that became ready in one poll are queued in plan order, whatever order
        the server reported them in.
        """
        notes: list[str] = []
        ready: list[tuple[int, int, Any, str]] = []
        for event in await self._fetch():
            self.seq = max(self.seq, event["seq"])
            task_id = str(event.get("task") or "")
            found = self._step_of(task_id)
            if found is None:
                continue
            record, index = found
            payload = event.get("payload") if isinstance(event.get("payload"), dict) else {}
            status = payload.get("to") or payload.get("status")
            if event.get("type") == "unblocked" and task_id not in self._queued:
                self._queued.add(task_id)
                ready.append((record.number, index, record, task_id))
            elif event.get("type") == "status_changed" and status in (
                "done",
                "failed",
                "cancelled",
            ):
                notes.append(f"step {index + 1} of plan {record.number} is {status} ({task_id})")
        for _, index, record, task_id in sorted(ready, key=lambda r: r[:2]):
            step = record.steps[index]
            self.core.queue(
                f"Step {index + 1} of {len(record.steps)} [task {task_id}]: {step.title}\n"
                + (f"{step.body}\n" if step.body else "")
                + f"(ready now: every step it waits for is done; plan: {record.goal})"
            )
            notes.append(f"step {index + 1} of plan {record.number} is ready ({task_id}); queued")
        self.log.extend(notes)
        return notes

    def _step_of(self, task_id: str) -> tuple[Any, int] | None:
        if not task_id:
            return None
        for record in reversed(self.core.plans):
            if task_id in record.ids:
                return record, record.ids.index(task_id)
        return None
