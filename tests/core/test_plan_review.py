"""Plan review in the core: plans held until approved, rejected or discarded; saved plans edited.

A real `ollie-tasks` subprocess on a real SQLite file, the offline demo planner as the model.
"""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.core._plans import held_note_text
from ollie_nb.core._sessions import load_session
from ollie_nb.errors import NoPlanError, OllieUsageError, PlanReviewError
from ollie_nb.planning import Origin, Review, held_message
from tests.support.agents import tasks_agent

DIAMOND = "Ship it\n- Prepare\n- Left (after 1)\n- Right (after 1)\n- Join (after 2, 3)"


def tasks(db) -> list[tuple[str, str, str | None]]:
    """(id, title, parent) of every task in the store, oldest first."""
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, title, parent FROM tasks ORDER BY rowid").fetchall()
    return [tuple(r) for r in rows]


def blockers(db, task_id: str) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT blocker FROM deps WHERE task = ?", (task_id,)).fetchall()
    return {r[0] for r in rows}


def statuses(db) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT id, status FROM tasks").fetchall())


def reviewing(db) -> AgentConfig:
    return tasks_agent(db, reviewPlans=True)


@pytest.mark.anyio
async def test_the_agent_key_and_the_override_decide_whether_plans_are_held(make_core) -> None:
    config = AgentConfig.from_dict({"reviewPlans": True})
    core = await make_core(default_backend=True, agent=config, autosave=True, start=False)
    core.config = AgentConfig.from_dict({"reviewPlans": True})
    assert core.plans.reviewing
    core.plans.review = False
    assert not core.plans.reviewing  # the override wins
    core.config = AgentConfig()
    core.plans.review = None
    assert not core.plans.reviewing
    with pytest.raises(OllieUsageError, match="'reviewPlans' must be true or false"):
        AgentConfig.from_dict({"reviewPlans": "yes"})


@pytest.mark.anyio
async def test_a_held_plan_saves_nothing_until_approved_with_the_users_edits(
    make_core, tmp_path
) -> None:
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=reviewing(db))
    result = await core.submit(DIAMOND)
    told = [str(m.content) for m in core.session.history if m.role == "tool"]
    held = core.plans.held()
    before = tasks(db)
    draft = core.plans.draft(1)
    draft.set_title(1, "Prepare well")
    draft.delete(3)  # Right
    draft.add_dependency(3, 1)  # Join waits for Prepare as well
    assert core.plans.draft(1).rows[0].title == "Prepare"  # a copy was edited
    record, twice = await asyncio.gather(
        core.plans.approve(1, draft), core.plans.approve(1, draft), return_exceptions=True
    )
    assert isinstance(twice, PlanReviewError)
    assert str(twice) == "plan 1 is being saved now; wait for it"
    queued = core.prompts.items
    again = await core.run_queue()
    await core.aclose()  # the store is read as the agent left it
    assert [r.number for r in held] == [1] and held[0].review is Review.HELD
    assert any(held_message(1) in text for text in told)  # the model was told to stop and wait
    assert "Stop here" not in result.reply  # the user reads the user's words
    assert "Plan 1 is waiting for your review" in result.reply
    assert before == []  # nothing on the task server while it was held
    assert record.review is Review.APPROVED and record.kind == "tasks" and record.number == 1
    saved = tasks(db)
    goal_id = record.goal_id
    assert [t[1] for t in saved] == ["Ship it", "Prepare well", "Left", "Join"]
    assert all(t[2] == goal_id for t in saved[1:])
    prepare, left, join = record.ids
    assert blockers(db, left) == {prepare} and blockers(db, join) == {left, prepare}
    assert [s.title for s in record.steps] == ["Prepare well", "Left", "Join"]
    assert len(queued) == 1 and queued[0].origin is Origin.REVIEW
    text = queued[0].text
    assert text.startswith("Plan 1 was approved by the user.")
    assert "- step 1: title changed to 'Prepare well'" in text
    assert "- deleted step 3 ('Right')" in text
    assert all(f"[{i}]" in text for i in record.ids)  # the new step ids
    assert core.session.history[-2].content == text  # the model's next turn saw the approval
    assert again is not None and "approved" in again.reply
    with pytest.raises(PlanReviewError, match="plan 1 is approved and saved already"):
        await core.plans.approve(1)


@pytest.mark.anyio
async def test_reject_queues_the_reason_and_the_revision_is_held_again(make_core, tmp_path) -> None:
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=reviewing(db))
    await core.submit(DIAMOND)
    kept = core.plans.draft(1)
    kept.set_title(4, "Join <them>")
    core.plans.keep_draft(1, kept)
    core.plans.reject(1, "  add   a test step ")
    item = core.prompts.items[0]
    await core.run_queue()
    await core.aclose()  # the store is read as the agent left it
    assert item.origin is Origin.REVIEW
    assert item.text.splitlines()[:2] == [
        "Plan 1 was sent back by the user for changes; nothing of it was saved.",
        "The user's reason: add a test step",
    ]
    assert "The user's edits:\n- step 4: title changed to 'Join <them>'\nPlan: Ship it" in item.text
    first, second = core.plans
    assert first.review is Review.REJECTED and second.review is Review.HELD
    assert [r.number for r in core.plans.held()] == [2]
    assert second.steps[-1].title == "Revise: add a test step"
    assert tasks(db) == []
    with pytest.raises(PlanReviewError, match="plan 1 was sent back for changes"):
        core.plans.discard(1)
    with pytest.raises(PlanReviewError, match="say what should change in plan 2"):
        core.plans.reject(2, "   ")


@pytest.mark.anyio
async def test_discard_leaves_nothing_and_tells_the_model_at_its_next_turn(
    make_core, tmp_path
) -> None:
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=reviewing(db))
    await core.submit(DIAMOND)
    core.plans.discard(1)
    queued = list(core.prompts.items)
    await core.submit("What now?")
    await core.aclose()  # the store is read as the agent left it
    assert queued == [] and tasks(db) == []
    assert core.plans[0].review is Review.DISCARDED and core.plans.held() == []
    assert "Plan 1 was discarded by the user" in core.session.history[-2].content


@pytest.mark.anyio
async def test_misuse_is_one_clear_line(make_core, tmp_path) -> None:
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=tasks_agent(db))
    with pytest.raises(NoPlanError, match=r"there is no plan 1 \(this session has no plans"):
        core.plans.discard(1)
    await core.submit(DIAMOND)  # review off: saved when made
    with pytest.raises(PlanReviewError, match="plan 1 was not held for review"):
        await core.plans.approve(1)
    core.plans.review = True
    await core.submit(DIAMOND)
    draft = core.plans.draft(2)
    draft.set_after(1, [4])  # Prepare waits for Join: a cycle
    with pytest.raises(PlanReviewError, match="plan 2 cannot be approved: steps 1 -> 4"):
        await core.plans.approve(2, draft)
    with pytest.raises(NoPlanError, match=r"there is no plan 7 \(this session has plans 1 to 2"):
        core.plans.draft(7)
    with pytest.raises(NoPlanError, match="plan 2 awaits your review"):
        await core.runs.run_plan(key=2)
    await core.aclose()  # the store is read as the agent left it
    assert len(tasks(db)) == 5  # plan 1 only


@pytest.mark.anyio
async def test_a_queue_plan_approved_is_told_first_then_worked_step_by_step(
    make_core, tmp_path
) -> None:
    core = await make_core(default_backend=True, queue_fallback=True, start=False)
    core.plans.review = True
    await core.start()
    await core.submit("Chores\n- One\n- Two")
    assert core.prompts.items == []
    record = await core.plans.approve(1)
    queued = list(core.prompts.items)
    assert record.kind == "queue" and record.ids == ("q1", "q2")
    assert [i.origin for i in queued] == [Origin.REVIEW, Origin.PLAN, Origin.PLAN]
    assert [i.step.plan for i in queued[1:]] == [1, 1]  # the held plan's number, not the next
    assert core.plans.book.queue_states(record) == {"q1": "open", "q2": "open"}


@pytest.mark.anyio
async def test_a_held_plan_and_its_draft_come_back_with_the_session(
    make_core, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("OLLIE_DATA_DIR", str(tmp_path / "data"))
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=reviewing(db), autosave=True)
    await core.submit(DIAMOND)
    draft = core.plans.draft(1)
    draft.set_title(2, "Left <b>& 'co'</b>")
    core.plans.keep_draft(1, draft)
    core.session.save()
    session = core.session.session_id
    await core.aclose()  # the store is read as the agent left it
    data = load_session(session)
    assert data.plans[0].review == Review.HELD
    assert data.drafts[1].rows[1].title == "Left <b>& 'co'</b>"
    again = await make_core(default_backend=True, agent=reviewing(db), autosave=True)
    note = await again.session.resume(session)
    assert note.endswith("plan 1 awaits your review: %ollie plan show N, %ollie plan approve N")
    assert [r.number for r in again.plans.held()] == [1]
    record = await again.plans.approve(1)
    await again.aclose()  # the store is read as the agent left it
    assert held_note_text([2, 3]).startswith("plans 2, 3 await your review")
    assert [t[1] for t in tasks(db)][1:3] == ["Prepare", "Left <b>& 'co'</b>"]
    assert record.review is Review.APPROVED


@pytest.mark.anyio
async def test_a_saved_plan_is_edited_on_the_task_server(make_core, tmp_path) -> None:
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=tasks_agent(db))
    await core.submit(DIAMOND)
    record = core.plans[0]
    prepare = record.ids[0]
    await core.servers.task_client.update(prepare, status="done")
    draft = core.plans.draft(1)
    assert [r.task_id for r in draft.rows] == list(record.ids)
    draft.set_title(2, "Left, carefully")
    number = draft.add("Announce", after=[4])
    draft.add_dependency(3, 2)  # Right waits for Left too
    changes = await core.plans.edit_saved(1, draft)
    told = core.prompts.with_notes("next")
    refused = core.plans.draft(1)
    refused.delete(1)
    with pytest.raises(
        PlanReviewError, match=rf"step 1 \[{prepare}\] is done: it cannot be deleted"
    ):
        await core.plans.edit_saved(1, refused)
    moved = core.plans.draft(1)
    moved.set_after(1, [moved.add("Warm up")])
    with pytest.raises(PlanReviewError, match="is done: what it waits for cannot be changed"):
        await core.plans.edit_saved(1, moved)
    await core.aclose()  # the store is read as the agent left it
    prepare, left, right, join = record.ids
    titles = {t[0]: t[1] for t in tasks(db)}
    assert titles[left] == "Left, carefully"
    new = core.plans[0]
    assert len(new.ids) == 5 and new.ids[:4] == record.ids and number == 5
    announce = new.ids[4]
    assert titles[announce] == "Announce" and blockers(db, announce) == {join}
    assert blockers(db, right) == {prepare, left}
    assert [t[2] for t in tasks(db) if t[0] == announce] == [record.goal_id]
    assert changes == [
        f"added step 'Announce' [{announce}]",
        f"step [{left}]: title changed to 'Left, carefully'",
        f"step [{right}] now waits for [{left}]",
    ]
    assert "The user edited saved plan 1:" in told and f"[{announce}] Announce" in told
    assert statuses(db)[prepare] == "done" and len(tasks(db)) == 6  # the refusals changed nothing


@pytest.mark.anyio
async def test_a_dependency_removed_from_a_saved_plan_is_removed_on_the_task_server(
    make_core, tmp_path
) -> None:
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=tasks_agent(db))
    await core.submit(DIAMOND)
    draft = core.plans.draft(1)
    draft.remove_dependency(4, 2)  # Join no longer waits for Left
    changes = await core.plans.edit_saved(1, draft)
    record = core.plans[0]
    told = core.prompts.with_notes("next")
    await core.aclose()  # the store is read as the agent left it
    _, left, right, join = record.ids
    assert blockers(db, join) == {right}  # the edge is gone from the store, not only the text
    assert changes == [f"step [{join}] no longer waits for [{left}]"]
    assert f"no longer waits for [{left}]" in told


@pytest.mark.anyio
async def test_an_approved_plan_is_worked_by_the_watch_and_by_a_parallel_run(
    make_core, tmp_path
) -> None:
    db = tmp_path / "tasks.db"
    core = await make_core(default_backend=True, agent=reviewing(db))
    await core.submit(DIAMOND)
    record = await core.plans.approve(1)
    core.plans.take_prompt(1)  # the approval turn is not what is tested here
    await core.watch.start(60, wake=False)
    watched = [i.step.step_id for i in core.prompts.items if i.origin is Origin.WATCH]
    await core.watch.stop()
    run = await core.runs.run_plan(parallel=2, key=1)
    await core.aclose()  # the store is read as the agent left it
    assert watched == [record.ids[0]]  # the ready step of the approved plan
    assert run.outcome == dict.fromkeys(record.ids, "done")
    assert set(statuses(db).values()) == {"done"}


@pytest.mark.anyio
async def test_a_plan_in_review_is_no_plan_reminder_until_it_is_approved(
    make_core, tmp_path
) -> None:
    core = await make_core(
        default_backend=True,
        agent=AgentConfig.from_dict({"reviewPlans": True}),
        autosave=True,
        start=False,
    )
    core.autosave = False
    await core.start()
    await core.submit(DIAMOND)
    held = await core.plans.reminder()
    await core.plans.approve(1)
    approved = await core.plans.reminder()
    assert held == ""  # the model is not told to work a plan the user has not approved
    assert approved.startswith("[plan reminder: your current plan]\nPlan: Ship it")


@pytest.mark.anyio
async def test_approving_through_a_failing_fallback_degrades_as_an_unreviewed_plan_does(
    make_core, tmp_path
) -> None:
    def broken(goal, steps):
        raise RuntimeError("the sheet is locked")

    def numbered(goal, steps):
        return [f"row-{i}" for i in range(len(steps))]

    core = await make_core(default_backend=True, fallback_plan_backend=broken, start=False)
    core.plans.review = True
    await core.start()
    await core.submit(DIAMOND)
    failed = await core.plans.approve(1)
    queued = [core.plans.take_prompt(1).text]
    await core.plans.set_fallback(numbered)
    await core.submit(DIAMOND)
    saved = await core.plans.approve(2)
    queued = [*queued, core.plans.take_prompt(2).text]
    assert failed.review is Review.APPROVED and failed.kind == "context" and not failed.ids
    assert (
        failed.warning
        == "warning: broken() failed (the sheet is locked); this plan lives in context only."
    )
    assert failed.warning in queued[0]  # the model is told, as for a plan saved when made
    assert saved.kind == "custom" and saved.ids == ("row-0", "row-1", "row-2", "row-3")
    assert "[row-3] Join" in queued[1]


@pytest.mark.anyio
async def test_a_missing_plan_with_one_plan_in_the_session_says_only_plan_1(make_core) -> None:
    from ollie_nb.planning import PlanRecord, PlanStep

    config = AgentConfig.from_dict({})
    core = await make_core(default_backend=True, agent=config, start=False)
    core.plans.book.reset([PlanRecord(1, "Goal", (PlanStep("a"),), text="Plan: Goal")])
    with pytest.raises(NoPlanError, match=r"^there is no plan 2 \(this session has only plan 1\)$"):
        core.plans.draft(2)
