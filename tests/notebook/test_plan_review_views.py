"""What `%ollie plan show` builds from a plan: model-written titles are escaped in its HTML."""

from __future__ import annotations

from ollie_nb.notebook._plans import PlanShow
from ollie_nb.planning import PlanDraft, PlanRecord, PlanStep, Review, format_plan

EVIL = "<img src=x onerror=alert(1)>"


def test_a_held_plan_and_a_saved_one_escape_their_titles_and_goal() -> None:
    steps = (PlanStep(f"build {EVIL}"), PlanStep("ship & <b>", "", (0,)))
    goal = f"goal {EVIL}"
    held = PlanRecord(1, goal, steps, text=format_plan(goal, steps), review=Review.HELD)
    draft = PlanDraft.from_plan(goal, steps)
    draft.set_title(2, f"edited {EVIL}")
    saved = PlanRecord(
        2,
        goal,
        steps,
        ("t1", "t2"),
        backend="task server '<x>'",
        text=format_plan(goal, steps, ["t1", "t2"]),
        kind="tasks",
    )
    for view in (PlanShow(held, draft), PlanShow(saved, None, {"t1": "done"})):
        page = view.html()
        assert EVIL not in page and "<b>" not in page.replace("<b>plan", "")
        assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "2. edited <img" in PlanShow(held, draft).text()  # the text form stays as written
    assert PlanShow(saved).title() == "plan 2 (task server '<x>')"
    assert "task server &#x27;&lt;x&gt;&#x27;" in PlanShow(saved).html()
