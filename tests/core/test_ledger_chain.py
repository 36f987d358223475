"""A ledger counts each response in itself and every parent; a request under way is held on
the chain until released (once); `exceeded` judges the spend alone, `check` the spend plus
what is under way, and the error names the ledger whose cap is reached."""

from __future__ import annotations

import pytest

from ollie_nb.core import BudgetExceededError, Caps
from ollie_nb.core._budget import Ledger, Scope
from ollie_nb.llm import Usage
from ollie_nb.planning import Spend


def test_usage_counts_in_the_ledger_and_its_parents_only() -> None:
    top = Ledger(Scope.SESSION)
    run = Ledger(Scope.PLAN, parent=top, name="1")
    mine = Ledger(Scope.SUBAGENT, parent=run, name="c1")
    sibling = Ledger(Scope.SUBAGENT, parent=run, name="c2")
    mine.add(Usage(input_tokens=10, output_tokens=5, cost=0.5))
    assert list(mine.chain()) == [mine, run, top]
    assert [ledger.spend for ledger in (mine, run, top)] == [Spend(15, 0.5)] * 3
    assert sibling.spend == Spend()


def test_a_request_under_way_counts_for_check_not_for_exceeded() -> None:
    top = Ledger(Scope.SESSION, lambda: Caps(tokens=100))
    mine = Ledger(Scope.SUBAGENT, parent=top, name="c1")
    held = mine.reserve(Spend(100))
    assert top.in_flight == Spend(100) and mine.in_flight == Spend(100)
    assert mine.exceeded() is None
    with pytest.raises(BudgetExceededError) as caught:
        mine.check()
    assert "the session's token cap 100 is reached" in str(caught.value)
    assert "about 100 tokens in requests under way" in str(caught.value)
    held.release()
    held.release()  # once: a second release holds nothing back
    assert top.in_flight == Spend() and mine.in_flight == Spend()
    mine.check()


def test_the_error_names_the_ledger_whose_cap_is_reached() -> None:
    top = Ledger(Scope.SESSION)
    mine = Ledger(Scope.SUBAGENT, lambda: Caps(tokens=10), parent=top, name="c1")
    mine.add(Usage(input_tokens=10))
    error = mine.exceeded()
    assert isinstance(error, BudgetExceededError)
    assert str(error).startswith("sub-agent c1's token cap 10 is reached: 10 tokens used")
