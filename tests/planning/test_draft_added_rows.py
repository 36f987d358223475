"""A row added to a draft: its title's spacing tidied, its body kept (none by default), put
at the end or where asked (clamped to the rows there are), in an empty draft too."""

from __future__ import annotations

from ollie_nb.planning import PlanDraft, PlanStep


def three() -> PlanDraft:
    steps = [PlanStep("a"), PlanStep("b"), PlanStep("c")]
    return PlanDraft.from_plan("g", steps, ["t1", "t2", "t3"])


def titles(draft: PlanDraft) -> list[str]:
    return [row.title for row in draft.rows]


def test_an_added_rows_title_is_tidied_and_its_body_kept() -> None:
    draft = three()
    assert draft.add("  new   step ") == 4
    assert draft.add("with body", "  the body ") == 5
    assert [(r.title, r.body) for r in draft.rows[3:]] == [
        ("new step", ""),
        ("with body", "the body"),
    ]


def test_a_row_goes_where_asked_within_the_rows() -> None:
    draft = three()
    assert draft.add("first", at=1) == 1
    assert draft.add("last", at=99) == 5
    assert draft.add("clamped", at=-3) == 1
    assert titles(draft) == ["clamped", "first", "a", "b", "c", "last"]


def test_a_row_is_added_to_an_empty_draft() -> None:
    draft = PlanDraft.from_plan("g", [], [])
    assert draft.add("only") == 1
    assert titles(draft) == ["only"]
