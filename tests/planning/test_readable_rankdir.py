"""A plan's drawing direction for a cell's width: a long chain top to bottom, a wide plan not."""

from __future__ import annotations

from ollie_nb.planning import PlanStep, readable_rankdir


def chain(n: int) -> list[PlanStep]:
    return [PlanStep(f"step {i}", after=(i - 1,) if i else ()) for i in range(n)]


def test_a_long_chain_is_drawn_top_to_bottom_and_a_short_or_wide_plan_as_asked() -> None:
    assert readable_rankdir(chain(5)) == "TB"
    assert readable_rankdir(chain(4)) == "TB"
    assert readable_rankdir(chain(3)) == "LR"
    fan = [PlanStep(f"step {i}") for i in range(6)]
    assert readable_rankdir(fan) == "LR"
    wide = [*chain(4), *(PlanStep(f"more {i}", after=(0,)) for i in range(5))]  # 4 deep, 6 wide
    assert readable_rankdir(wide) == "LR"
    assert readable_rankdir(chain(5), "BT") == "BT"  # a direction of the user's own stays
