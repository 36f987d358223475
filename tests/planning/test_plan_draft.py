"""PlanDraft: the rows a user edits before a plan is saved, checked with the plan's rules."""

from __future__ import annotations

import pytest

from ollie_nb.planning import PlanDraft, PlanStep, PlanValidationError, parse_plan


def diamond() -> PlanDraft:
    _, steps = parse_plan(
        {
            "goal": "ship",
            "steps": [
                {"title": "spec"},
                {"title": "build", "after": [0]},
                {"title": "docs", "after": [0]},
                {"title": "release", "after": [1, 2]},
            ],
        }
    )
    return PlanDraft.from_plan("ship", steps, ["t1", "t2", "t3", "t4"])


def test_an_unedited_draft_gives_back_the_plan_and_no_edits() -> None:
    draft = diamond()
    assert draft.valid and draft.edits() == [] and not draft.changed
    assert [s.after for s in draft.steps()] == [(), (0,), (0,), (1, 2)]
    assert [r.task_id for r in draft.rows] == ["t1", "t2", "t3", "t4"]


def test_titles_bodies_and_dependencies_are_edited_by_step_number() -> None:
    draft = diamond()
    draft.set_title(2, "  build   it ")
    draft.set_body(3, "write the README")
    draft.remove_dependency(4, 3)
    steps = draft.steps()
    assert steps[1] == PlanStep("build it", "", (0,))
    assert steps[2].body == "write the README"
    assert steps[3].after == (1,)
    assert draft.edits() == [
        "step 2: title changed to 'build it'",
        "step 3: description changed",
        "step 4: now waits for 2",
    ]


def test_deleting_a_step_keeps_the_order_it_stood_for() -> None:
    draft = diamond()
    draft.delete(2)  # release waited for build, which waited for spec
    assert [r.title for r in draft.rows] == ["spec", "docs", "release"]
    assert draft.after_numbers(3) == [2, 1]
    assert draft.steps()[2].after == (0, 1)
    assert "deleted step 2 ('build')" in draft.edits()


def test_added_steps_and_moves_come_out_in_an_order_that_respects_every_edge() -> None:
    draft = diamond()
    number = draft.add("announce", "post it", after=[4])
    assert number == 5
    draft.move(4, 1)  # release shown first, though it waits for build and docs
    assert [r.title for r in draft.rows] == ["release", "spec", "build", "docs", "announce"]
    assert draft.valid
    titles = [s.title for s in draft.steps()]
    assert titles == ["spec", "build", "docs", "release", "announce"]
    assert draft.steps()[4].after == (3,)
    assert "added step 5 ('announce')" in draft.edits()
    assert "steps reordered" in draft.edits()


def test_a_cycle_is_named_by_step_numbers_and_blocks_saving() -> None:
    draft = diamond()
    draft.add_dependency(1, 4)
    (problem,) = draft.problems()
    assert "cycle" in problem and "1" in problem and "4" in problem
    with pytest.raises(PlanValidationError, match="cycle"):
        draft.steps()


def test_the_plan_rules_apply_to_edits() -> None:
    draft = diamond()
    draft.set_title(1, "   ")
    assert draft.problems() == ["step 1: 'title' is required (empty)"]
    draft.set_title(1, "x" * 600)
    assert "keep it under 500" in draft.problems()[0]
    draft.set_title(1, "spec")
    for n in range(25):
        draft.add(f"extra {n}")
    draft.set_after(4, range(5, 29))
    assert "'after' lists 24 steps; the limit is 20" in draft.problems()[0]


def test_bad_step_numbers_are_one_clear_line() -> None:
    draft = diamond()
    with pytest.raises(PlanValidationError, match="there is no step 9; the plan has steps 1 to 4"):
        draft.set_title(9, "x")
    with pytest.raises(PlanValidationError, match="cannot wait for itself"):
        draft.add_dependency(2, 2)
    with pytest.raises(PlanValidationError, match="integer"):
        draft.row("2")  # type: ignore[arg-type]


def test_the_last_step_deleted_then_a_step_added_is_a_deletion_and_an_addition() -> None:
    draft = diamond()
    draft.delete(4)
    assert draft.add("new") == 4
    assert draft.edits() == ["deleted step 4 ('release')", "added step 4 ('new')"]
