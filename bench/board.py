"""`%ollie board`: from a store's commit to the board's new state, and a 1,000-task board drawn.

Latency: a kernel-less BoardView (the widget and its periodic look at the feed, on this
loop) follows a real ollie-tasks store through the core's BoardFeed; another ollie-tasks
process marks a step done, and the time runs from the start of that call (its MCP round
trip included) to the widget's new HTML. The baseline is that call alone. Drawing: the
board of a 1,000-task store (4 plans of 249 steps, a fifth of the steps claimed) built
and drawn as the widget draws it, against `dot` alone on the same plans' DOT sources.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings, alternate_sync, median, paired_ratio
from bench._servers import THIS_TREE, task_server_args, task_server_config
from bench.plan_graph import _dot
from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.core._board_feed import board_feed
from ollie_nb.llm import OfflineBackend
from ollie_nb.planning import StepState
from ollie_nb.planning._board import BoardFilter, ClaimLog, ClaimSeen, board_of, plan_drawing
from ollie_nb.planning._client import Task
from ollie_nb.tools import McpServer

LATENCY_GOAL_MS = 200.0
DRAW_GOAL_S = 1.0
PLANS, STEPS = 4, 249  # 4 goals + 996 steps: a 1,000-task store


def store_tasks(plans: int, steps: int) -> tuple[list[Task], ClaimLog, float]:
    """A store's listing of `plans` goals with `steps` steps each (chains and fan-outs,
    half done, a fifth claimed), its claim log, and the time it is seen at."""
    now, log, tasks = time.time(), ClaimLog(), []
    for p in range(plans):
        goal = f"g{p}"
        tasks.append(Task(goal, f"Plan {p}"))
        for i in range(steps):
            sid = f"g{p}s{i}"
            blockers = (f"g{p}s{i - 1 - i % 3}",) if i else ()
            state = StepState.DONE if i < steps // 2 else StepState.OPEN
            holder, until = "", ""
            if i % 5 == 0 and i >= steps // 2:
                state, holder = StepState.IN_PROGRESS, f"worker-{i % 7}"
                until = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now + 200))
                log.claims[sid] = ClaimSeen(holder, now - 30, 300.0)
            tasks.append(
                Task(sid, f"step {i} of plan {p}", state, goal, blockers, None, until, (), holder)
            )
    return tasks, log, now


def draw_board(tasks: list[Task], log: ClaimLog, now: float) -> int:
    """The board's HTML as the widget draws it (no reuse of earlier drawings): its length."""
    from ollie_nb.planning._board import plan_section

    plans = board_of(tasks, log, now, BoardFilter())
    return len("".join(plan_section(p, plan_drawing(p)) for p in plans))


def dot_sources(tasks: list[Task], log: ClaimLog, now: float) -> list[bytes]:
    from ollie_nb.planning.graph import plan_graph, readable_rankdir

    sources = []
    for p in board_of(tasks, log, now, BoardFilter()):
        states = {s.id: s.state for s in p.steps}
        ids = [s.id for s in p.steps]
        rankdir = readable_rankdir(p.plan_steps)
        graph = plan_graph(
            p.goal.title, p.plan_steps, ids, states, goal_id=p.goal.id, rankdir=rankdir
        )
        sources.append(graph.source.encode("utf-8"))
    return sources


def drawing(settings: Settings) -> Figure:
    if shutil.which("dot") is None:
        return Figure(what="board of a 1,000-task store", unit="s", ours=None, error="no dot")
    steps = settings.size(STEPS, 5)
    tasks, log, now = store_tasks(PLANS, steps)
    sources = dot_sources(tasks, log, now)
    repeats = settings.repeats(5, 3)
    times = alternate_sync(
        {"ours": lambda: draw_board(tasks, log, now), "dot": lambda: [_dot(s) for s in sources]},
        repeats,
    )
    ours = median(times["ours"])
    return Figure(
        what=f"the board of a {len(tasks):,}-task store ({PLANS} plans) built and drawn",
        unit="s",
        ours=ours,
        baseline=median(times["dot"]),
        baseline_what="dot -Tsvg alone on the plans' DOT sources",
        goal=f"< {DRAW_GOAL_S:g} s",
        met=ours < DRAW_GOAL_S,
        samples=repeats,
        paired=paired_ratio(times["ours"], times["dot"]),
    )


async def _done_by_other(server: McpServer, step: str) -> float:
    """Mark `step` done through another ollie-tasks process: the call's seconds."""
    begun = time.perf_counter()
    result = await server.call_tool("task_update", {"id": step, "status": "done"})
    assert not result.is_error, result.text
    return time.perf_counter() - begun


async def _latencies(db: Path, repeats: int) -> tuple[list[float], list[float]]:
    """(commit to the widget's new state, the other process's call alone), per repeat."""
    from ollie_nb.notebook._board_widget import BoardView

    core = await AgentCore(
        OfflineBackend(), workdir=db.parent, autosave=False,
        agent=AgentConfig.from_dict({"mcpServers": {"tasks": task_server_config(db)}}),
    ).start()  # fmt: skip
    other = McpServer("other", command=sys.executable, args=task_server_args(db), env=THIS_TREE)
    client = core.servers.task_client
    assert client is not None
    goal = await client.create(title="Board latency")
    steps = [await client.create(title=f"step {i}", parent=goal) for i in range(2 * repeats)]
    await other.call_tool("task_list", {"status": "all"})  # started and connected first
    view = BoardView(None, "LR", "every plan")  # type: ignore[arg-type]  # no kernel: no Stop
    feed, watcher = board_feed(core.servers, BoardFilter(), view.post)
    view.begin(feed, await feed.start(watcher))
    shown, alone = [], []
    try:
        for n in range(repeats):
            await asyncio.sleep(0.3)  # a quiet store: the feed's gap is over
            before = view.redraws
            begun = time.perf_counter()
            await _done_by_other(other, steps[2 * n])
            while (
                view.redraws == before or f" {2 * n + 1}/{len(steps)} done" not in view.widget.html
            ):
                await asyncio.sleep(0.002)
            shown.append(time.perf_counter() - begun)
            alone.append(await _done_by_other(other, steps[2 * n + 1]))
            await asyncio.sleep(0.3)
    finally:
        await feed.stop()
        await other.aclose()
        await core.aclose()
    return shown, alone


async def latency(settings: Settings) -> Figure:
    repeats = settings.repeats(10, 3)
    with tempfile.TemporaryDirectory() as tmp:
        shown, alone = await _latencies(Path(tmp) / "tasks.db", repeats)
    ours = median(shown) * 1000
    return Figure(
        what="a step done by another process, to the board widget's new state",
        unit="ms",
        ours=ours,
        baseline=median(alone) * 1000,
        baseline_what="the other process's task_update call alone",
        goal=f"< {LATENCY_GOAL_MS:g} ms",
        met=ours < LATENCY_GOAL_MS,
        samples=repeats,
        note="the feed and the widget share one loop here (a kernel: two threads); the widget looks every 50 ms",
    )


async def run(settings: Settings) -> list[Figure]:
    """The latency, then the drawing."""
    return [await latency(settings), drawing(settings)]


ROW = Row("board", "%ollie board: a commit to the board's new state, and a 1,000-task board", run)
