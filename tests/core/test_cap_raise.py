"""A reached cap raised by an answer (`raise:N`): the ledger keeps what answers added to its
caps, in dollars or whole tokens as the cap is, and the error of a reached cap names the
ledger it is so the answer can raise that one."""

from __future__ import annotations

import pytest

from ollie_nb.core import BudgetExceededError, CapKind, Caps
from ollie_nb.core._budget import Ledger, Scope
from ollie_nb.llm import Usage
from ollie_nb.planning import Spend


def test_plus_raises_each_set_cap_by_its_own_kind_and_leaves_unset_ones_unset() -> None:
    caps = Caps(cost=0.5, tokens=100)
    assert caps.plus(Caps(cost=0.25)) == Caps(cost=0.75, tokens=100)
    assert caps.plus(Caps(tokens=50)) == Caps(cost=0.5, tokens=150)
    assert caps.plus(Caps(cost=1.0, tokens=7)) == Caps(cost=1.5, tokens=107)
    assert Caps(tokens=100).plus(Caps(cost=2.0, tokens=1)) == Caps(tokens=101)  # no cost cap made
    assert Caps(cost=0.5).plus(Caps(tokens=9)) == Caps(cost=0.5)
    assert caps.plus(Caps()) is caps


def test_a_new_ledger_has_nothing_raised_or_stopped() -> None:
    ledger = Ledger(Scope.PLAN, lambda: Caps(tokens=10), name="1")
    assert ledger.raised == Caps() and not ledger.raised
    assert ledger.stopped == {}
    assert ledger.caps() == Caps(tokens=10)


def test_raise_cap_adds_dollars_or_whole_tokens_to_its_own_kind_and_adds_up() -> None:
    ledger = Ledger(Scope.PLAN, lambda: Caps(cost=0.5, tokens=100), name="2")
    ledger.raise_cap(CapKind.TOKENS, 50.9)
    assert ledger.raised == Caps(tokens=50) and ledger.caps() == Caps(cost=0.5, tokens=150)
    ledger.raise_cap(CapKind.TOKENS, 25)
    assert ledger.caps() == Caps(cost=0.5, tokens=175)
    ledger.raise_cap(CapKind.COST, 0.25)
    assert ledger.raised == Caps(cost=0.25, tokens=75)
    ledger.raise_cap(CapKind.COST, 0.5)
    assert ledger.caps() == Caps(cost=1.25, tokens=175)
    ledger.raise_cap(CapKind.TOKENS, 1)  # a token raise keeps the dollars raised before
    assert ledger.raised == Caps(cost=0.75, tokens=76)


def test_a_raised_cap_lets_requests_go_on_until_the_raise_is_spent_too() -> None:
    ledger = Ledger(Scope.PLAN, lambda: Caps(tokens=100), name="3")
    ledger.add(Usage(input_tokens=100))
    with pytest.raises(BudgetExceededError):
        ledger.check()
    ledger.raise_cap(CapKind.TOKENS, 50)
    ledger.check()  # 100 of 150
    ledger.add(Usage(input_tokens=60))
    with pytest.raises(BudgetExceededError) as caught:
        ledger.check()
    assert caught.value.cap == 150 and caught.value.kind is CapKind.TOKENS


def test_the_error_names_the_ledger_whose_cap_is_reached_and_its_scope() -> None:
    top = Ledger(Scope.SESSION, lambda: Caps(tokens=10))
    run = Ledger(Scope.PLAN, lambda: Caps(tokens=1000), parent=top, name="1")
    run.add(Usage(input_tokens=20))
    error = run.exceeded()
    assert error is not None and error.ledger is top and error.scope is Scope.SESSION
    top.raise_cap(CapKind.TOKENS, 10_000)
    held = run.reserve(Spend(2000))  # a request under way: the next one meets the plan's cap
    with pytest.raises(BudgetExceededError) as caught:
        run.reserve(Spend(1))
    assert caught.value.ledger is run and caught.value.scope is Scope.PLAN
    assert caught.value.in_flight == Spend(2000)
    held.release()
