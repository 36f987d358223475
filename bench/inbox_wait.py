"""An inbox answer to its waiter's wakeup: `TaskClient.wait_answer` on the store's signal.

A worker parked on an approval (`ollie-work --ask`) waits in `wait_answer`. The time runs
from a person's answer, written to the store by another connection (as another process's
`ollie-tasks answer` would), to the waiter's return. Ours follows the store's change
signal (tasks://events); the baseline is the same wait polling every ANSWER_POLL s, as it
did before. A real ollie-tasks process on a real SQLite file (its watch looks at the file
every 25 ms).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings, median
from bench._servers import task_server_config
from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import OfflineBackend
from ollie_nb.planning import TaskClient
from ollie_nb.planning._inbox import ANSWER_POLL
from ollie_nb.tasks import open_store
from ollie_nb.tasks._inbox import Inbox

GOAL_MS = 100.0


async def _wakeup(client: TaskClient, db: Path, gap: float) -> float:
    """Ask, wait, answer `gap` s into the wait: the seconds from the answer to the return."""
    request = await client.ask("approval", "bench", "w1", timeout=60)
    waiter = asyncio.create_task(client.wait_answer(request, timeout=30))
    await asyncio.sleep(gap)  # the waiter is between two looks, as a real one mostly is
    with open_store(db) as store:
        Inbox(store).answer(request, "allow", "ann")
        answered = time.perf_counter()
    row = await waiter
    assert row is not None and row.allowed
    return time.perf_counter() - answered


async def _latencies(db: Path, repeats: int) -> tuple[list[float], list[float]]:
    """(following the signal, polling), per repeat, alternated."""
    core = await AgentCore(
        OfflineBackend(), workdir=db.parent, autosave=False,
        agent=AgentConfig.from_dict({"mcpServers": {"tasks": task_server_config(db)}}),
    ).start()  # fmt: skip
    wired = core.servers.task_client
    assert wired is not None and wired.updates is not None
    polling = TaskClient(core.servers.dispatcher.dispatch, wired.server, wired.caps)
    signalled, polled = [], []
    try:
        for n in range(repeats):
            gap = 0.15 + 0.3 * n / max(1, repeats - 1)  # spread over the poll period
            signalled.append(await _wakeup(wired, db, gap))
            polled.append(await _wakeup(polling, db, gap))
    finally:
        await core.aclose()
    return signalled, polled


async def run(settings: Settings) -> list[Figure]:
    repeats = settings.repeats(10, 4)
    with tempfile.TemporaryDirectory() as tmp:
        signalled, polled = await _latencies(Path(tmp) / "tasks.db", repeats)
    ours = median(signalled) * 1000
    return [
        Figure(
            what="an inbox answer written by another connection, to its waiter's wakeup",
            unit="ms",
            ours=ours,
            baseline=median(polled) * 1000,
            baseline_what=f"the same wait polling every {ANSWER_POLL:g} s (before)",
            goal=f"< {GOAL_MS:g} ms",
            met=ours < GOAL_MS,
            samples=repeats,
            note="the store's watch looks at the SQLite file every 25 ms",
        )
    ]


ROW = Row("inbox-wait", "An inbox answer to its waiter's wakeup (the store's signal)", run)
