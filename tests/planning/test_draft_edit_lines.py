"""The lines a plan's edits are told to the model in: a moved step says its old number, and a
changed dependency lists every step it now waits for, or says it waits for nothing."""

from __future__ import annotations

from ollie_nb.planning import PlanDraft, parse_plan


def chain() -> PlanDraft:
    _, steps = parse_plan(
        {
            "goal": "ship",
            "steps": [
                {"title": "spec"},
                {"title": "build", "after": [0]},
                {"title": "docs"},
            ],
        }
    )
    return PlanDraft.from_plan("ship", steps, ["t1", "t2", "t3"])


def test_a_moved_and_renamed_step_says_its_old_number() -> None:
    draft = chain()
    draft.move(3, 1)
    draft.set_title(1, "write docs")
    assert draft.edits() == [
        "step 1 (was 3): title changed to 'write docs'",
        "steps reordered",
    ]


def test_a_step_waiting_for_two_lists_both() -> None:
    draft = chain()
    draft.set_after(3, [1, 2])
    assert draft.edits() == ["step 3: now waits for 1, 2"]


def test_a_step_waiting_for_none_says_nothing() -> None:
    draft = chain()
    draft.set_after(2, [])
    assert draft.edits() == ["step 2: now waits for nothing"]
