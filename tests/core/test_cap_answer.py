"""How an answer to a cap request is taken: only `raise:N` (N > 0) of someone the asker takes
answers from raises the cap; anything else stops, as a cap does without asking."""

from __future__ import annotations

from ollie_nb.core._cap_ask import CapAnswer
from ollie_nb.planning import InboxRequest


def row(state: str = "answered", answer: str = "", by: str = "ann") -> InboxRequest:
    return InboxRequest(
        "i-1", "cap", "plan 1 reached ...", "w1", state, answer=answer, answered_by=by
    )


def test_a_raise_raises_by_its_amount():
    assert CapAnswer.of(row(answer="raise:0.25"), ()).amount == 0.25
    assert CapAnswer.of(row(answer="raise:5000", by="bob"), ("ann", "bob")).amount == 5000


def test_stop_deny_silence_and_unreadable_amounts_stop():
    taken = [
        CapAnswer.of(row(answer="stop"), ()),
        CapAnswer.of(row(answer="deny"), ()),
        CapAnswer.of(row(answer="raise:lots"), ()),
        CapAnswer.of(row(answer="raise:-3"), ()),
        CapAnswer.of(row("open"), ()),
        CapAnswer.of(row("expired"), ()),
        CapAnswer.of(None, ()),
    ]
    assert [a.amount for a in taken] == [0] * 7
    assert taken[0].why == "answered stop" and taken[4].why == "not answered in time"


def test_a_raise_from_someone_not_named_stops():
    answer = CapAnswer.of(row(answer="raise:1", by="mallory"), ("ann",))
    assert answer.amount == 0 and answer.why == "answered by mallory, not taken"
