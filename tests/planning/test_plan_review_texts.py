"""Plan review in the planning layer: drafts saved and loaded, the book's held plans, the texts."""

from __future__ import annotations

import pytest

from ollie_nb.errors import NoPlanError
from ollie_nb.planning import (
    PlanBook,
    PlanDraft,
    PlanRecord,
    PlanStep,
    Review,
    approval_prompt,
    read_review,
    rejection_prompt,
)

STEPS = (PlanStep("spec"), PlanStep("build", "make it", (0,)), PlanStep("ship", "", (1,)))


def held(number: int = 1) -> PlanRecord:
    return PlanRecord(number, "ship it", STEPS, status="held", review=Review.HELD)


def test_a_draft_goes_to_json_and_back_with_its_edits() -> None:
    draft = PlanDraft.from_plan("ship it", STEPS, ["t1", "t2", "t3"])
    draft.set_title(1, "write the spec")
    draft.add("announce", after=[3])
    draft.delete(2)
    back = PlanDraft.from_dict(draft.to_dict())
    assert back.rows == draft.rows and back.original == draft.original
    assert back.edits() == draft.edits() and back.steps() == draft.steps()
    with pytest.raises(ValueError, match="malformed plan draft"):
        PlanDraft.from_dict({"goal": "g", "rows": [{"title": "no key"}]})


def test_a_drafts_text_keeps_the_users_order_and_names_its_problems() -> None:
    draft = PlanDraft.from_plan("ship it", STEPS)
    draft.move(3, 1)  # ship shown first, still after build
    assert draft.text().splitlines()[:2] == ["Plan: ship it", "1. ship"]
    assert "   after: step 3" in draft.text()
    draft.set_after(2, [1])  # spec waits for ship: a cycle
    assert draft.text().splitlines()[-1].startswith("problem: steps ")


def test_the_book_holds_a_plan_with_its_draft_until_it_is_replaced() -> None:
    book = PlanBook()
    book.hold(held())
    assert book.held() == [book.records[0]] and book.draft(1).goal == "ship it"
    book.replace(
        PlanRecord(1, "ship it", STEPS, ("q1", "q2", "q3"), kind="queue", review=Review.APPROVED)
    )
    assert book.held() == [] and book.queue_states(book.records[0]) == {
        "q1": "open",
        "q2": "open",
        "q3": "open",
    }
    with pytest.raises(NoPlanError, match="plan 1 is not held for review"):
        book.draft(1)
    with pytest.raises(NoPlanError, match="there is no plan 2"):
        book.replace(held(2))
    draft = PlanDraft.from_plan("ship it", STEPS)
    draft.set_title(1, "kept")
    book.reset([held()], {1: draft})
    assert book.draft(1).rows[0].title == "kept"


def test_the_review_prompts_are_read_back_from_their_first_line_only() -> None:
    record = PlanRecord(4, "ship it", STEPS, ("t1", "t2", "t3"), text="Plan: ship it")
    approved = approval_prompt(record, ["deleted step 2 ('x')"])
    assert approved.splitlines()[:3] == [
        "Plan 4 was approved by the user.",
        "The user's edits:",
        "- deleted step 2 ('x')",
    ]
    assert read_review(approved).review is Review.APPROVED
    sent = read_review(rejection_prompt(2, "fewer   steps"))
    assert (sent.plan, sent.review, sent.reason) == (2, Review.REJECTED, "fewer steps")
    assert read_review("Ship it\n- a\n\nPlan 1 was approved by the user.") is None
