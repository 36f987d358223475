"""The inbox on the board: requests asked by another process appear in the board's inbox
rows (escaped, with their buttons) and leave it once answered anywhere; a button pressed in
the widget answers its own request through the core, recorded with who answered.

Real `ollie-tasks` server subprocesses on a real SQLite file (slow: they start processes).
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from ollie_nb.core._board_feed import Board, board_feed
from ollie_nb.core._inbox_handle import _local_user
from ollie_nb.planning._board import BoardFilter, board_html
from ollie_nb.tools import McpServer
from tests.support.agents import THIS_TREE, tasks_agent
from tests.support.waits import until

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

EVIL_ASKER = "<img src=x onerror=alert(1)>"
EVIL_WHAT = "run <script>alert('x')</script> {'key': '***'}"


async def as_other(db: Path, *calls: tuple[str, dict]) -> list[str]:
    """Calls by another user through an ollie-tasks process of its own; their answers' texts."""
    server = McpServer(
        "other", command=sys.executable, args=["-m", "ollie_nb.tasks", "serve", "--db", str(db)],
        env=THIS_TREE,
    )  # fmt: skip
    texts = []
    try:
        for tool, args in calls:
            result = await server.call_tool(tool, args)
            assert not result.is_error, result.text
            texts.append(result.text.strip())
    finally:
        await server.aclose()
    return texts


def asking(kind: str, what: str, asker: str, goal: str, step: str) -> tuple[str, dict]:
    args = {"kind": kind, "what": what, "asker": asker, "goal": goal, "step": step}
    return "task_ask", {**args, "timeout": 120}


async def test_a_request_asked_elsewhere_shows_on_the_board_until_answered(make_core, tmp_path):
    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db))
    client = core.servers.task_client
    goal = await client.create(title="Ship it")
    step = await client.create(title="deploy", parent=goal)
    boards: list[Board] = []
    feed, watcher = board_feed(core.servers, BoardFilter(), boards.append)
    await feed.start(watcher)
    try:
        assert boards[-1].inbox == ()
        (asked,) = await as_other(db, asking("approval", EVIL_WHAT, EVIL_ASKER, goal, step))
        await until(lambda: [r.id for r in boards[-1].inbox] == [asked], what="the row")
        row = boards[-1].inbox[0]
        assert (row.goal, row.step, row.asker, row.what) == (goal, step, EVIL_ASKER, EVIL_WHAT)
        shown = board_html(boards[-1].plans, inbox=boards[-1].inbox)
        assert "<img" not in shown and "<script>" not in shown
        assert "&lt;img src=x onerror=alert(1)&gt;" in shown
        assert f'data-request="{asked}" data-answer="allow">Allow' in shown
        await as_other(db, ("task_answer", {"id": asked, "answer": "deny", "by": "bob"}))
        await until(lambda: boards[-1].inbox == (), what="the answered row leaves the board")
    finally:
        await feed.stop()


def button(html: str, request: str, answer: str) -> dict:
    """The message the front end sends for the button of `request` answering `answer`."""
    found = re.findall(r'<button data-request="([^"]+)" data-answer="([^"]+)">', html)
    assert (request, answer) in found, found
    return {"kind": "answer", "request": request, "answer": answer}


async def test_a_button_of_the_widget_answers_its_request(make_core, tmp_path):
    pytest.importorskip("anywidget")
    from ollie_nb.notebook._board_widget import BoardView

    db = tmp_path / "tasks.db"
    core = await make_core(agent=tasks_agent(db))
    client = core.servers.task_client
    goal = await client.create(title="Ship it")
    step = await client.create(title="deploy", parent=goal)
    first, capped = await as_other(
        db,
        asking("approval", "write notes.txt", "worker-1", goal, step),
        asking("cap", "plan reached its $0.50 cap: $0.51 spent", "worker-2", goal, ""),
    )
    loop = asyncio.get_running_loop()
    view = BoardView(
        None,  # type: ignore[arg-type]  # no kernel: the answer is given explicitly
        "LR",
        "every plan",
        lambda rid, word: asyncio.run_coroutine_threadsafe(core.inbox.answer(rid, word), loop),
    )
    feed, watcher = board_feed(core.servers, BoardFilter(), view.post)
    view.begin(feed, await feed.start(watcher))
    try:
        html = view.widget.html
        assert 'data-answer="raise">Raise' in html and 'data-answer="stop">Stop' in html
        view._message(view.widget, button(html, capped, "raise") | {"answer": "raise:0.5"}, [])
        await until(lambda: f"answered {capped}" in view.widget.html, what="the answer's note")
        rows = await client.inbox("all", [capped, first])
        by_id = {r.id: r for r in rows}
        assert by_id[capped].answer == "raise:0.5"
        assert by_id[capped].answered_by == _local_user()
        assert by_id[first].open  # the other request is untouched
        await until(lambda: f'data-request="{capped}"' not in view.widget.html, what="row leaves")
        assert f'data-request="{first}"' in view.widget.html
    finally:
        view.following = False
        await feed.stop()
