"""Spend sums field by field: tokens, dollars and the requests with no price each add up and
come off on their own (a reservation's release subtracts what it held)."""

from __future__ import annotations

from ollie_nb.planning import Spend


def test_spends_add_and_subtract_each_field() -> None:
    a, b = Spend(100, 0.5, 2), Spend(30, 0.25, 1)
    assert a + b == Spend(130, 0.75, 3)
    assert a - b == Spend(70, 0.25, 1)


def test_the_total_of_spends_is_their_sum() -> None:
    assert Spend.total([]) == Spend()
    assert Spend.total([Spend(1, 0.5, 1), Spend(2, 0.25, 0), Spend(3, 0.0, 2)]) == Spend(6, 0.75, 3)
