"""`%ollie board`'s widget: the task store's plans, live, in any notebook front end.

An anywidget (an ES module front end and one synced trait, `html`), so it runs where
anywidget runs: JupyterLab, Notebook 7, VS Code. The core's feed (core/_board_feed.py)
posts each new board on the runtime's loop thread into a queue; a periodic callback on
the kernel's own loop takes the newest one (older ones are dropped: coalesced) and sets
the trait, at most once per GAP, so display state is only ever set on the kernel's thread.
The inbox's buttons send a message to the kernel; its handler (the kernel's thread) hands
the answer to `answer`, which runs core.inbox.answer on the runtime's loop; the outcome
comes back through a queue the same periodic callback reads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from ollie_nb.notebook._display import esc
from ollie_nb.planning._board import (
    BoardPlan,
    board_answer,
    drawing_key,
    inbox_html,
    plan_drawing,
    plan_section,
)

if TYPE_CHECKING:
    from ollie_nb.core._board_feed import Board, BoardFeed
    from ollie_nb.notebook._runtime import NotebookRuntime

TICK = 0.05  # seconds between looks at the feed's boards
GAP = 0.25  # seconds between redraws at least: at most 4 a second
PLAIN = "ollie: the task store's board (live in the widget)"

ESM = """
function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "ollie-board";
  const draw = () => { box.innerHTML = model.get("html"); };
  model.on("change:html", draw);
  box.addEventListener("click", (event) => {
    const retry = event.target.closest("button.board-retry");
    if (retry) {
      retry.disabled = true;
      model.send({ kind: "retry", step: retry.dataset.step });
      return;
    }
    const button = event.target.closest("button[data-answer]");
    if (!button) return;
    let answer = button.dataset.answer;
    if (answer === "raise") {
      const by = button.closest("tr").querySelector("input.board-raise-by");
      answer = "raise:" + (by ? by.value : "");
    }
    button.disabled = true;
    model.send({ kind: "answer", request: button.dataset.request, answer });
  });
  draw();
  el.appendChild(box);
}
export default { render };
"""

# A graph keeps its size and scrolls sideways in a narrow place (the side panel): scaled
# down to fit, its labels would be a few pixels tall.
CSS = """
.ollie-board { font-size: 13px; line-height: 1.35; }
.ollie-board .board-plan { margin: 0 0 14px 0; }
.ollie-board .board-plan h4 { margin: 6px 0; font-size: 14px; }
.ollie-board .board-graph { overflow-x: auto; }
.ollie-board .board-graph svg { max-width: none; height: auto; }
.ollie-board table.board-holdings { border-collapse: collapse; font-size: 12px; }
.ollie-board .board-table { overflow-x: auto; }
.ollie-board table.board-holdings td { white-space: nowrap; }
.ollie-board table.board-holdings td, .ollie-board table.board-holdings th {
  padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left;
}
.ollie-board tr.board-lapsed td { color: #a33; }
.ollie-board table.board-retries td { padding: 2px 8px; color: #a33; white-space: nowrap; }
.ollie-board table.board-inbox-rows { border-collapse: collapse; font-size: 12px; margin-bottom: 10px; }
.ollie-board table.board-inbox-rows td, .ollie-board table.board-inbox-rows th {
  padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top;
}
.ollie-board td.board-answers { white-space: nowrap; }
.ollie-board td.board-answers button { margin-right: 4px; }
.ollie-board input.board-raise-by { width: 5em; margin-right: 4px; }
"""


class BoardWidget(anywidget.AnyWidget):
    """The board's front end: it draws the HTML the kernel sets (built escaped)."""

    _esm = traitlets.Unicode(ESM).tag(sync=True)
    _css = traitlets.Unicode(CSS).tag(sync=True)
    html = traitlets.Unicode("").tag(sync=True)


Answerer = Callable[[str, str], "concurrent.futures.Future[Any]"]
"""Answers an inbox request (its id, the answer) on the runtime's loop."""

MAX_DRAWINGS = 256  # plans' drawings kept for reuse


class Drawings:
    """Each plan's drawing, made again only when its steps or their states change (a board
    re-posted with new times redraws its tables, not dot)."""

    def __init__(self, rankdir: str) -> None:
        self.rankdir = rankdir
        self._kept: dict[tuple[object, ...], str] = {}
        self.made = 0

    def __call__(self, plan: BoardPlan) -> str:
        key = drawing_key(plan)
        found = self._kept.get(key)
        if found is None:
            if len(self._kept) >= MAX_DRAWINGS:
                self._kept.pop(next(iter(self._kept)))
            found = self._kept[key] = plan_drawing(plan, self.rankdir)
            self.made += 1
        return found


class BoardView:
    """The live board of one cell (see the module docstring)."""

    def __init__(
        self, runtime: NotebookRuntime, rankdir: str, what: str, answer: Answerer | None = None
    ) -> None:
        self.runtime, self.what, self.answer = runtime, what, answer
        self.drawings = Drawings(rankdir)
        self.widget = BoardWidget()
        self.boards: queue.Queue[Board] = queue.Queue()
        self.feed: BoardFeed | None = None
        self.redraws = 0
        self.shown: Board | None = None
        self.pending: Board | None = None  # the newest board not drawn yet (older ones dropped)
        self.drawn_at = 0.0
        self.following = False
        self.notes: queue.Queue[str] = queue.Queue()  # answers' outcomes, from the loop
        self.note = ""  # the last answer's outcome, shown in the board's head
        self._loop = asyncio.get_event_loop()
        self.widget.observe(self._widget_closed, names="comm")
        self.widget.on_msg(self._message)

    def post(self, board: Board) -> None:
        """The feed's sink (called on the runtime's loop thread)."""
        self.boards.put(board)

    def begin(self, feed: BoardFeed, first: Board) -> None:
        """Show the first board and follow the feed's newer ones."""
        self.feed = feed
        self.draw(first)
        self.follow()

    def follow(self) -> None:
        """Look at the posted boards every TICK until stopped (or the feed ends)."""
        self.following = True
        self._loop.call_later(TICK, self._tick)

    def _message(self, _widget: Any, content: Any, _buffers: Sequence[Any]) -> None:
        """A button of the inbox or a Retry was pressed (the kernel's thread): hand it on."""
        if isinstance(content, Mapping) and content.get("kind") == "retry":
            self.retry(str(content.get("step") or ""))
            return
        if not isinstance(content, Mapping) or content.get("kind") != "answer":
            return
        request, word = str(content.get("request") or ""), str(content.get("answer") or "")
        if word.startswith("raise:") and not board_answer(word):
            self._noted(f"not answered: {request}: type how much to raise its cap by, as it asks")
            return
        if self.answer is None or not request or not board_answer(word):
            self._noted(f"not answered: {request} {word!r} is no answer the board gives")
            return
        future = self.answer(request, word)
        future.add_done_callback(lambda done: self.notes.put(_outcome(request, word, done)))

    def retry(self, step_id: str) -> concurrent.futures.Future[list[str]] | None:
        """Reopen a failed step and those after it on the runtime's loop (the kernel's thread
        does not wait); what it did is shown in the board's head."""
        feed = self.feed
        if not step_id or feed is None or self.runtime is None:
            return None
        future = self.runtime.submit(lambda: feed.retry(step_id))
        future.add_done_callback(lambda done: self.notes.put(_retried(step_id, done)))
        return future

    def _noted(self, note: str) -> None:
        self.note = note
        if self.shown is not None:
            self.draw(self.shown)

    def _tick(self) -> None:
        while not self.notes.empty():
            self._noted(self.notes.get_nowait())
        while True:
            try:
                self.pending = self.boards.get_nowait()
            except queue.Empty:
                break
        newest = self.pending
        if newest is not None and time.monotonic() - self.drawn_at >= GAP:
            self.pending = None
            try:
                self.draw(newest)
            except Exception as exc:  # a rendering bug must not stop the board
                self.widget.html = f"<p>board: rendering failed: {esc(str(exc))}</p>"
        if self.following and (self.feed is None or self.feed.running):
            self._loop.call_later(TICK, self._tick)

    def draw(self, board: Board) -> None:
        """Set the widget's HTML to `board` (the kernel's thread only)."""
        self.shown, self.drawn_at = board, time.monotonic()
        self.redraws += 1
        failed = f" · <i>{esc(board.failure)}</i>" if board.failure else ""
        note = f' · <span class="board-note">{esc(self.note)}</span>' if self.note else ""
        head = (
            f"<p><b>ollie</b> board · {esc(self.what)} · {len(board.plans)} plans{failed}{note}</p>"
        )
        if not board.plans:
            body = '<p class="board-empty">no plan on the task store matches</p>'
        else:
            body = "".join(plan_section(p, self.drawings(p)) for p in board.plans)
        self.widget.html = head + inbox_html(board.inbox) + body

    def _widget_closed(self, change: Mapping[str, Any]) -> None:
        """The widget was closed (its output cleared): no one sees the board, so it stops."""
        if change["new"] is None:
            self.stop()

    def stop(self) -> None:
        """Stop following the store (the board keeps its last state)."""
        self.following = False
        feed = self.feed
        if feed is not None and self.runtime is not None:
            self.runtime.submit(feed.stop)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        shown = self.widget._repr_mimebundle_()  # anywidget: (data, metadata)
        data, meta = shown if isinstance(shown, tuple) else (shown or {}, {})
        data = {**data, "text/plain": PLAIN}
        return data, meta


def _outcome(request: str, word: str, done: concurrent.futures.Future[Any]) -> str:
    """What an answer's future says: answered, or the store's reason it was not."""
    if done.cancelled():
        return f"not answered: {request} (cancelled)"
    exc = done.exception()
    if exc is not None:
        return f"not answered: {request}: {exc}"
    return f"answered {request}: {word}"


def _retried(step_id: str, done: concurrent.futures.Future[list[str]]) -> str:
    """What a retry's future says: the steps reopened, or why not."""
    if done.cancelled():
        return f"not retried: {step_id} (cancelled)"
    exc = done.exception()
    if exc is not None:
        return f"not retried: {step_id}: {exc}"
    return f"reopened {', '.join(done.result())}"
