"""Event-driven planning: task server events become queued step prompts.

PLANNING.md's next step: instead of polling its plan, the agent is told when a
blocked step becomes ready (its last blocker is done) and when someone else
finishes one of its steps. This watcher reads the wired task server's
`task_events(since=...)` (any server with that tool works), queues one step
prompt per newly ready step of a plan the agent made, and keeps a short log.
It is handed narrow callables (dispatch, the plans, enqueue), never the agent.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ollie_nb.core._env import AgentEnv
from ollie_nb.planning import PlanRecord, step_prompt
from ollie_nb.tools import ToolResult

log = logging.getLogger("ollie_nb.core")

PAGE = 1000
LOG_SIZE = 50
READY_NOTE = "(ready now: every step it waits for is done; plan: {goal})"

Dispatch = Callable[[str, str, dict[str, Any]], Awaitable[ToolResult]]


class TaskEventWatcher:
    """Polls `task_events` every `interval` seconds while started; queues ready steps."""

    def __init__(
        self,
        server: str,
        dispatch: Dispatch,
        plans: Callable[[], Sequence[PlanRecord]],
        enqueue: Callable[[str], Any],
        interval: float = 2.0,
    ) -> None:
        self.server = server
        self._dispatch = dispatch
        self._plans = plans
        self._enqueue = enqueue
        self.interval = max(0.1, interval)
        self.seq = 0
        self.log: deque[str] = deque(maxlen=LOG_SIZE)
        self._queued: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_env(
        cls,
        env: AgentEnv,
        plans: Callable[[], Sequence[PlanRecord]],
        enqueue: Callable[[str], Any],
        interval: float = 2.0,
    ) -> TaskEventWatcher:
        """A watcher of the env's task server; a RuntimeError says why there can be none."""
        if not env.task_server:
            raise RuntimeError("no task server is wired (see the agent's mcpServers)")
        if "task_events" not in env.servers[env.task_server].tools:
            raise RuntimeError(f"the task server '{env.task_server}' has no task_events tool")
        return cls(env.task_server, env.dispatcher.dispatch, plans, enqueue, interval)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Begin at the server's newest event (history is not replayed), then poll."""
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
        result = await self._dispatch(
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
        ready: list[tuple[int, int, PlanRecord]] = []
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
                ready.append((record.number, index, record))
            elif event.get("type") == "status_changed" and status in (
                "done",
                "failed",
                "cancelled",
            ):
                notes.append(f"step {index + 1} of plan {record.number} is {status} ({task_id})")
        for _, index, record in sorted(ready, key=lambda r: r[:2]):
            note = READY_NOTE.format(goal=record.goal)
            self._enqueue(step_prompt(record.steps, index, record.ids, kind="tasks", note=note))
            step_id = record.ids[index]
            notes.append(f"step {index + 1} of plan {record.number} is ready ({step_id}); queued")
        self.log.extend(notes)
        return notes

    def _step_of(self, task_id: str) -> tuple[PlanRecord, int] | None:
        if not task_id:
            return None
        for record in reversed(self._plans()):
            if record.kind == "tasks" and task_id in record.ids:
                return record, record.ids.index(task_id)
        return None
