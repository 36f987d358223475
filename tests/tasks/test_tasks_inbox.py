"""The inbox of ollie-tasks: requests asked, listed and answered once, on both backends, over
stdio, over HTTP with named users (the answer records the token's user) and from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ollie_nb.tasks import InvalidTaskError, open_store
from ollie_nb.tasks._inbox import INBOX_PAGE, MAX_WHAT_CHARS, Inbox
from ollie_nb.tasks._store import Caller
from tests.support.tasks_harness import as_user, cli, connect, fails, http_server, ok
from tests.support.waits import wait_until


def test_a_request_is_answered_once_and_each_change_is_an_event(any_db: str | Path) -> None:
    with open_store(any_db) as store:
        goal = store.create("Plan")
        step = store.create("Step", parent=goal)
        inbox = Inbox(store)
        asked = inbox.ask("approval", 'shell {"cmd": "ls"}', "w1", goal=goal, step=step)
        (row,), more = inbox.list()
        assert (row.id, row.state, row.step, row.asker, row.answer, more) == (
            asked,
            "open",
            step,
            "w1",
            "",
            False,
        )
        answered = inbox.answer(asked, "allow", "ann")
        assert (answered.state, answered.answer, answered.answered_by) == (
            "answered",
            "allow",
            "ann",
        )
        with pytest.raises(InvalidTaskError, match=r"answered already by ann at .*: allow"):
            inbox.answer(asked, "deny", "bob")
        assert inbox.list()[0] == [] and inbox.list("answered")[0][0].answer == "allow"
        events = [(e.type, e.task, e.payload) for e in store.events(0, 100)][-2:]
    assert events == [
        (
            "inbox.asked",
            step,
            {"inbox": asked, "kind": "approval", "asker": "w1", "goal": goal, "step": step},
        ),
        ("inbox.answered", step, {"inbox": asked, "answer": "allow", "answered_by": "ann"}),
    ]


def test_an_unanswered_request_expires_and_takes_no_answer(any_db: str | Path) -> None:
    with open_store(any_db) as store:
        inbox = Inbox(store)
        asked = inbox.ask("cap", "plan reached its $0.50 cap", "w1", timeout=0.05)
        wait_until(lambda: inbox.list("expired")[0] != [], timeout=5)
        with pytest.raises(InvalidTaskError, match=r"timed out at .* taken as denied"):
            inbox.answer(asked, "raise:1.5")
        assert inbox.list("all")[0][0].answer == ""


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (("vote", "x", "w1"), "bad kind 'vote'"),
        (("approval", "", "w1"), "what is empty"),
        (("approval", "x" * (MAX_WHAT_CHARS + 1), "w1"), "the limit is 2000"),
        (("approval", "ring \x07 bell", "w1"), "control character"),
        (("approval", "x", "w\x1b1"), "control character"),
        (("approval", "x", ""), "asker is empty"),
    ],
)
def test_bad_requests_are_refused(tmp_path: Path, args: tuple[str, str, str], refusal: str) -> None:
    with open_store(tmp_path / "tasks.db") as store:
        with pytest.raises(InvalidTaskError, match=refusal):
            Inbox(store).ask(*args)
        assert Inbox(store).list("all")[0] == []


def test_only_known_answers_and_the_callers_own_name_are_taken(tmp_path: Path) -> None:
    with open_store(tmp_path / "tasks.db") as store:
        inbox = Inbox(store)
        asked = inbox.ask("approval", "x", "w1")
        for bad in ("yes", "raise:", "raise:-1", "raise:0", "raise:1e9"):
            with pytest.raises(InvalidTaskError, match="use allow, deny, stop or raise"):
                inbox.answer(asked, bad)
        with pytest.raises(InvalidTaskError, match="you are bob on this server"):
            inbox.answer(asked, "allow", "alice", caller=Caller(user="bob"))
        assert inbox.answer(asked, "raise:2.50", caller=Caller(user="bob")).answered_by == "bob"


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_request_asked_through_one_server_is_answered_through_another(
    tmp_path: Path,
) -> None:
    db = tmp_path / "tasks.db"
    async with connect(db) as worker, connect(db) as board:
        asked = await ok(worker, "task_ask", kind="approval", what="shell ls", asker="w1")
        assert asked.startswith("q-") and len(asked.split()) == 1
        listed = await ok(board, "task_inbox")
        assert listed.startswith(f"{asked}  open      approval     @w1  shell ls  (until ")
        answered = await ok(board, "task_answer", id=asked, answer="deny", by="ann")
        assert answered.startswith(f"answered: {asked}  answered") and "deny by ann" in answered
        again = await fails(board, "task_answer", id=asked, answer="allow")
        assert "answered already by ann" in again
        page = json.loads(await ok(worker, "task_inbox", ids=[asked], state="all", format="json"))
        assert [(r["answer"], r["answered_by"]) for r in page["requests"]] == [("deny", "ann")]


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_inbox_pages_with_next(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        made = [Inbox(store).ask("approval", f"call {i}", "w1") for i in range(INBOX_PAGE + 5)]
    async with connect(db) as client:
        first = json.loads(await ok(client, "task_inbox", format="json"))
        rest = json.loads(await ok(client, "task_inbox", format="json", cursor=first["next"]))
    assert len(first["requests"]) == INBOX_PAGE and "next" not in rest
    assert [r["id"] for r in first["requests"] + rest["requests"]] == made
    assert [r["id"] for r in json.loads(cli(db, "inbox", "--json").stdout)] == made  # all pages


ALICE = "a" * 32
BOB = "b" * 32


@pytest.mark.slow
@pytest.mark.anyio
async def test_over_http_the_answer_records_the_tokens_user(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text(f"alice {ALICE}\nbob {BOB}\n")
    db = tmp_path / "tasks.db"
    async with (
        http_server(db, "--tokens", str(users)) as url,
        as_user(url, ALICE) as alice,
        as_user(url, BOB) as bob,
    ):
        asked = await ok(alice, "task_ask", kind="approval", what="fetch url", asker="")
        assert "you are bob on this server: answer as bob, not alice" in await fails(
            bob, "task_answer", id=asked, answer="allow", by="alice"
        )
        await ok(bob, "task_answer", id=asked, answer="allow")
    with open_store(db) as store:
        (row,), _ = Inbox(store).list("answered")
        by = [e.payload.get("by") for e in store.events(0, 10)]
    assert (row.asker, row.answered_by, row.answer) == ("alice", "bob", "allow")
    assert by == ["alice", "bob"]  # who made each change, as in every event of a named user


@pytest.mark.slow
def test_the_cli_lists_and_answers_the_inbox(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        asked = Inbox(store).ask("plan_review", "plan 2: three steps", "w1")
    listed = cli(db, "inbox")
    assert listed.stdout.startswith(f"{asked}  open      plan_review  @w1  plan 2: three steps")
    assert cli(db, "answer", asked, "allow", "--by", "ann").returncode == 0
    again = cli(db, "answer", asked, "deny")
    assert again.returncode == 1 and "answered already by ann" in again.stderr
    (row,) = json.loads(cli(db, "inbox", "--state", "answered", "--json").stdout)
    assert (row["answer"], row["answered_by"]) == ("allow", "ann")
