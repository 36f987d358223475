"""Caps at and around their bounds, by property: a cap is reached exactly at its figure,
the dollars before the tokens, the innermost ledger first; the tighter of two caps is the
lower of each; an environment cap is one above 0. (The in-flight reservation's bound is in
tests/core/test_model_gateway.py.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ollie_nb.core import BudgetExceededError, Budgets, CapKind, Caps
from ollie_nb.core._budget import COST_ENV, TOKENS_ENV, Ledger, Scope, env_budgets
from ollie_nb.llm import Usage
from ollie_nb.planning import Spend

DOLLARS = st.integers(0, 64).map(lambda n: n / 16)  # sums of these are exact in binary
TOKENS = st.integers(0, 2_000)
CAPS = st.builds(Caps, st.none() | DOLLARS.filter(bool), st.none() | TOKENS.filter(bool))


@settings(deadline=None)
@given(CAPS, TOKENS, DOLLARS)
def test_a_cap_is_reached_exactly_at_its_figure_the_dollars_first(caps, tokens, cost) -> None:
    spend = Spend(tokens, cost)
    by_cost = caps.cost is not None and cost >= caps.cost
    by_tokens = caps.tokens is not None and tokens >= caps.tokens
    expected = CapKind.COST if by_cost else CapKind.TOKENS if by_tokens else None
    assert caps.reached(spend) is expected
    if caps.cost is not None:  # one cent below the figure is not the cap, the figure is
        assert caps.reached(Spend(0, caps.cost)) is CapKind.COST
        assert caps.reached(Spend(0, caps.cost - 1 / 64)) is not CapKind.COST
    if caps.tokens is not None:
        assert caps.reached(Spend(caps.tokens, 0.0)) is not None
        assert caps.reached(Spend(caps.tokens - 1, 0.0)) is not CapKind.TOKENS


@settings(deadline=None)
@given(CAPS, CAPS)
def test_the_tighter_of_two_caps_is_the_lower_of_each(a, b) -> None:
    both = a.tighter(b)
    assert both == b.tighter(a)
    for kind in ("cost", "tokens"):
        figures = [x for x in (getattr(a, kind), getattr(b, kind)) if x is not None]
        assert getattr(both, kind) == (min(figures) if figures else None)
    budgets = Budgets(a, b, a).tighter(Budgets(b, a, Caps()))
    assert budgets == Budgets(both, both, a)


@settings(max_examples=150, deadline=None)
@given(
    session=CAPS,
    child=CAPS,
    spends=st.lists(st.tuples(TOKENS, DOLLARS), max_size=5),
    other=st.tuples(TOKENS, DOLLARS),
)
def test_the_innermost_ledger_whose_cap_is_reached_is_named(session, child, spends, other):
    top = Ledger(Scope.SESSION, lambda: session)
    mine = Ledger(Scope.SUBAGENT, lambda: child, parent=top, name="c1")
    sibling = Ledger(Scope.SUBAGENT, parent=top, name="c2")
    for tokens, cost in spends:
        mine.add(Usage(input_tokens=tokens, cost=cost))
    sibling.add(Usage(input_tokens=other[0], cost=other[1]))
    expected = (
        (Scope.SUBAGENT, child.reached(mine.spend))
        if child.reached(mine.spend)
        else (Scope.SESSION, session.reached(top.spend))
    )
    assert (sibling.exceeded() is None) == (session.reached(top.spend) is None)
    error = mine.exceeded()
    if expected[1] is None:
        assert error is None
        mine.check()  # nothing under way: a request may go
        return
    assert isinstance(error, BudgetExceededError)
    assert (error.scope, error.kind) == expected


@settings(deadline=None)
@given(st.sampled_from(["", " ", "0", "-1", "-0.5", "abc", "0.0001", "0.25", " 3 "]))
def test_an_environment_cost_cap_is_a_number_above_zero(raw) -> None:
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    expected = Budgets(session=Caps(cost=value)) if value > 0 else Budgets()
    assert env_budgets({COST_ENV: raw}) == expected


@settings(deadline=None)
@given(st.integers(-3, 3) | st.integers(1, 10**9))
def test_an_environment_token_cap_is_a_whole_number_above_zero(tokens) -> None:
    expected = Budgets(session=Caps(tokens=tokens)) if tokens > 0 else Budgets()
    assert env_budgets({TOKENS_ENV: str(tokens)}) == expected
