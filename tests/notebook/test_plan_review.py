"""Plan review in a real kernel: `reviewPlans` on, ollie-tasks on SQLite, the offline model.

Nothing reaches the task server until `%ollie plan approve`; the approval, a request for
changes and a discard are told to the model; a held plan survives `%ollie resume`.
"""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest

from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel

PLAN = "%%ollie\nShip it\n- Prepare\n- Left (after 1)\n- Right (after 1)\n- Join (after 2, 3)"


def reviewing_agent(base, db) -> str:
    server = {"command": sys.executable, "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db)]}
    path = base / "reviewing.json"
    path.write_text(json.dumps({"mcpServers": {"tasks": server}, "reviewPlans": True}))
    return str(path)


def tasks(db) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, title FROM tasks ORDER BY rowid").fetchall()


def blockers(db, task_id: str) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT blocker FROM deps WHERE task = ?", (task_id,)).fetchall()
    return {r[0] for r in rows}


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("review")
    k = Kernel(str(base), kernel_env(base))
    assert k.run("%load_ext ollie_nb").error is None
    db = base / "tasks.db"
    assert k.run(f"%ollie agent {reviewing_agent(base, db)}").error is None
    assert k.run("import ollie_nb\nag = ollie_nb.agent()").error is None
    yield k, base, db
    k.shutdown()


def test_nothing_is_saved_until_approve_then_the_edited_plan_is(kernel):
    k, _, db = kernel
    made = k.run(PLAN)
    assert made.error is None, made.error
    assert "Plan 1 awaits the user's review. Stop here and wait" in made.text()
    assert tasks(db) == []
    assert "held for review" in k.run("%ollie plans").text()
    shown = k.run("%ollie plan show 1").text()
    assert shown.startswith("plan 1 (held for review)\nPlan: Ship it\n1. Prepare")
    draft = k.run("%ollie plan edit 1").text()
    assert draft.startswith("plan 1, as a draft\nPlan: Ship it\n1. Prepare")
    edit = (
        "d = ag.plan_draft(1)\n"
        "d.set_title(1, 'Prepare well')\nd.delete(3)\nd.add_dependency(3, 1)\n"
        "ag.keep_draft(1, d)\nprint([p.number for p in ag.plans.held()])"
    )
    assert k.run(edit).text().strip() == "[1]"
    assert tasks(db) == []
    approved = k.run("%ollie plan approve 1")
    assert approved.error is None, approved.error
    texts = approved.texts()
    assert texts[0] == "ℹ plan 1 approved and saved on task server 'tasks'"
    assert "Plan 1 was approved; its steps are worked as they come." in approved.text()
    saved = tasks(db)
    assert [t for _, t in saved] == ["Ship it", "Prepare well", "Left", "Join"]
    prepare, left, join = (i for i, _ in saved[1:])
    assert blockers(db, left) == {prepare} and blockers(db, join) == {left, prepare}
    seen = "print(ag.history[-2].content)"
    told = k.run(seen).text()
    assert told.startswith("Plan 1 was approved by the user.\nThe user's edits:")
    assert "- deleted step 3 ('Right')" in told and f"[{join}] Join" in told
    assert "persisted" in k.run("%ollie plans").text()
    again = k.run("%ollie plan approve 1")
    assert "plan 1 is approved and saved already" in again.stderr()


def test_reject_leads_to_a_revised_plan_held_again_and_discard_leaves_nothing(kernel):
    k, _, db = kernel
    before = len(tasks(db))
    k.run(PLAN)
    number = int(k.run("print(ag.held_plans()[-1].number)").text())
    sent = k.run(f"%ollie plan reject {number} add a test step")
    assert sent.error is None, sent.error
    assert sent.texts()[0] == f"ℹ plan {number} sent back for changes"
    revised = number + 1
    assert f"Plan {revised} awaits the user's review" in sent.text()
    assert k.run("print([p.number for p in ag.held_plans()])").text().strip() == f"[{revised}]"
    assert "Revise: add a test step" in k.run(f"%ollie plan show {revised}").text()
    gone = k.run(f"%ollie plan discard {revised}")
    assert gone.text().startswith(f"ℹ plan {revised} discarded: nothing was saved")
    assert len(tasks(db)) == before
    rows = k.run("%ollie plans").text()
    assert "sent back" in rows and "discarded" in rows
    bad = k.run("%ollie plan reject")
    assert "usage: plan reject N" in bad.stderr()


def test_a_held_plan_comes_back_with_resume_and_is_approved_there(kernel):
    k, base, db = kernel
    k.run(PLAN)
    number = int(k.run("print(ag.held_plans()[-1].number)").text())
    session = k.run("print(ag.core.session.session_id)").text().strip()
    count = len(tasks(db))
    other = Kernel(str(base), kernel_env(base))
    try:
        assert other.run("%load_ext ollie_nb").error is None
        resumed = other.run(f"%ollie resume {session}")
        assert resumed.error is None, resumed.error
        assert resumed.text().splitlines()[-1] == (
            f"plan {number} awaits your review: %ollie plan show N, %ollie plan approve N"
        )
        held = "import ollie_nb\nprint([p.number for p in ollie_nb.agent().held_plans()])"
        assert other.run(held).text().strip() == f"[{number}]"
        approved = other.run(f"%ollie plan approve {number} --no-run")
        assert approved.error is None, approved.error
        assert approved.text().splitlines() == [
            f"ℹ plan {number} approved and saved on task server 'tasks'",
            "ℹ the approval is queued: %ollie run works it",
        ]
        assert len(tasks(db)) == count + 5
        queued = other.run("%ollie queue").text()
        assert f"Plan {number} was approved by the user." in queued
    finally:
        other.shutdown()


def test_the_trait_wins_over_the_agent_key_while_it_is_set(kernel):
    k, _, db = kernel
    before = len(tasks(db))
    assert k.run("%config OllieMagics.review_plans = False").error is None
    saved = k.run(PLAN)
    assert "awaits the user's review" not in saved.text()
    assert len(tasks(db)) == before + 5
    assert k.run("%config OllieMagics.review_plans = None").error is None
    held = k.run(PLAN)
    assert "awaits the user's review" in held.text()
    assert len(tasks(db)) == before + 5


def test_a_saved_plan_is_edited_from_code_and_a_done_step_is_not_deleted(kernel):
    k, _, db = kernel
    assert k.run("%config OllieMagics.review_plans = False").error is None
    try:
        k.run(PLAN)
    finally:
        assert k.run("%config OllieMagics.review_plans = None").error is None
    code = (
        "record = ag.plans[-1]\n"
        "ag.call(lambda core: core.servers.task_client.update(record.ids[0], status='done'))\n"
        "d = ag.plan_draft(record.number)\n"
        "d.set_title(2, 'Left <i>twice</i>')\nd.add('Announce', after=[4])\n"
        "d.add_dependency(3, 2)\n"
        "print(len(ag.edit_saved_plan(record.number, d)))\n"
        "print(ag.plans[-1].ids[-1])"
    )
    run = k.run(code)
    assert run.error is None, run.error
    count, announce = run.text().split()
    assert count == "3"
    titles = dict(tasks(db))
    ids = k.run("print(' '.join(record.ids))").text().split()
    assert titles[ids[1]] == "Left <i>twice</i>" and titles[announce] == "Announce"
    assert blockers(db, announce) == {ids[3]} and blockers(db, ids[2]) == {ids[0], ids[1]}
    refused = k.run(
        "d = ag.plan_draft(record.number)\nd.delete(1)\nag.edit_saved_plan(record.number, d)"
    )
    assert refused.error["ename"] == "PlanReviewError"
    assert refused.error["evalue"] == f"step 1 [{ids[0]}] is done: it cannot be deleted"
    assert ids[0] in dict(tasks(db))
