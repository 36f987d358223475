"""The board's widget draws the newest board at most 4 times a second, dropping older ones,
and reuses a plan's drawing while its steps and states stay the same."""

from __future__ import annotations

import asyncio
import time

import pytest

from ollie_nb.core._board_feed import Board
from ollie_nb.planning import StepState
from ollie_nb.planning._board import ClaimLog, board_of
from ollie_nb.planning._client import Task
from tests.support.waits import until

pytest.importorskip("anywidget")
pytestmark = pytest.mark.anyio


def board(done: int, seq: int) -> Board:
    """A plan of 3 steps, the first `done` of them done."""
    tasks = [Task("g1", "Ship it")]
    for i in range(3):
        state = StepState.DONE if i < done else StepState.OPEN
        tasks.append(Task(f"s{i}", f"step {i}", state, "g1"))
    return Board(tuple(board_of(tasks, ClaimLog(), time.time())), time.time(), seq, seq)


async def test_a_burst_of_boards_is_drawn_at_most_four_times_a_second() -> None:
    from ollie_nb.notebook._board_widget import GAP, BoardView

    view = BoardView(None, "LR", "every plan")  # type: ignore[arg-type]  # no kernel: no Stop
    view.draw(board(0, 0))
    view.follow()
    started = time.monotonic()
    for n in range(1, 41):  # 40 boards in about 0.4 s
        view.post(board(n % 4, n))
        await asyncio.sleep(0.01)
    await until(lambda: view.shown is not None and view.shown.seq == 40, what="the newest board")
    elapsed = time.monotonic() - started
    view.following = False
    assert view.redraws - 1 <= elapsed / GAP + 1, (view.redraws, elapsed)
    assert "0/3 done" in view.widget.html  # board 40: 40 % 4 == 0 steps done
    assert view.drawings.made <= 4  # four shapes of states: each drawn once


async def test_a_closed_board_stops_following() -> None:
    from ollie_nb.notebook._board_widget import BoardView

    view = BoardView(None, "LR", "every plan")  # type: ignore[arg-type]  # no kernel: no Stop
    view.draw(board(1, 1))
    view.follow()
    view.widget.close()  # its output cleared: the front end closes the widget's comm
    assert not view.following
