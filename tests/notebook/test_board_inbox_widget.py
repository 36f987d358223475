"""The board's inbox rows as HTML (escaped, the buttons of their kind) and the widget's
handling of a button's message: a valid answer is handed on for its own request, anything
else is refused with a note, and the answer's outcome is shown in the board's head."""

from __future__ import annotations

import concurrent.futures
import re
import time

import pytest

from ollie_nb.core._board_feed import Board
from ollie_nb.planning import InboxRequest
from ollie_nb.planning._board import board_answer, inbox_html
from tests.support.waits import until

pytest.importorskip("anywidget")
pytestmark = pytest.mark.anyio

ASKER = "<img src=x onerror=alert(1)>"


def request(rid: str, kind: str = "approval", what: str = "write notes.txt") -> InboxRequest:
    return InboxRequest(rid, kind, what, ASKER, "open", goal="g-1", step="s-2")


def buttons(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<button data-request="([^"]+)" data-answer="([^"]+)">', html)


def test_rows_are_escaped_and_carry_their_kind_of_buttons() -> None:
    html = inbox_html([request("q-1", what="<script>x()</script>"), request("q-2", "cap")])
    assert "<img" not in html and "<script>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;script&gt;" in html
    assert buttons(html) == [
        ("q-1", "allow"),
        ("q-1", "deny"),
        ("q-2", "raise"),
        ("q-2", "stop"),
    ]
    # the cap row's amount starts empty: a default (once 1.00) would raise a token cap by 1
    [amount] = re.findall(r'<input class="board-raise-by"[^>]*>', html)
    assert "value=" not in amount and 'placeholder="by how much"' in amount
    assert inbox_html([]) == '<div class="board-inbox"></div>'


@pytest.mark.parametrize(
    ("answer", "given"),
    [
        ("allow", True),
        ("stop", True),
        ("raise:0.5", True),
        ("raise:", False),
        ("raise:-1", False),
        ("yes", False),
        ("<b>", False),
    ],
)
def test_only_the_boards_answers_are_given(answer: str, given: bool) -> None:
    assert board_answer(answer) is given


def board_with(*requests: InboxRequest) -> Board:
    return Board((), time.time(), 0, 1, "", requests)


async def test_a_button_message_answers_its_own_request_and_says_how_it_went() -> None:
    from ollie_nb.notebook._board_widget import BoardView

    given: list[tuple[str, str]] = []
    futures: list[concurrent.futures.Future[None]] = []

    def answer(rid: str, word: str) -> concurrent.futures.Future[None]:
        given.append((rid, word))
        futures.append(concurrent.futures.Future())
        return futures[-1]

    view = BoardView(None, "LR", "every plan", answer)  # type: ignore[arg-type]
    view.draw(board_with(request("q-1"), request("q-2")))
    view.follow()
    try:
        pressed = {"kind": "answer", "request": "q-2", "answer": "deny"}
        view._message(view.widget, pressed, [])
        assert given == [("q-2", "deny")]
        futures[0].set_exception(RuntimeError("answered already <by bob>"))
        await until(lambda: "not answered: q-2" in view.widget.html, what="the refusal")
        assert "&lt;by bob&gt;" in view.widget.html
        view._message(view.widget, {**pressed, "answer": "<b>yes</b>"}, [])
        assert len(given) == 1  # no answer the board gives: nothing is asked of the store
        assert "&lt;b&gt;yes&lt;/b&gt;" in view.widget.html
        view._message(view.widget, {**pressed, "request": "q-1", "answer": "allow"}, [])
        futures[1].set_result(None)
        await until(lambda: "answered q-1: allow" in view.widget.html, what="the answer's note")
    finally:
        view.following = False


async def test_a_raise_without_an_amount_is_not_sent_and_says_what_to_type() -> None:
    from ollie_nb.notebook._board_widget import BoardView

    given: list[tuple[str, str]] = []
    view = BoardView(None, "LR", "every plan", lambda *a: given.append(a))  # type: ignore[arg-type]
    view.draw(board_with(request("q-3", "cap")))
    for empty in ("raise:", "raise:0"):
        view._message(view.widget, {"kind": "answer", "request": "q-3", "answer": empty}, [])
        assert given == []
        assert "not answered: q-3: type how much to raise its cap by" in view.widget.html
