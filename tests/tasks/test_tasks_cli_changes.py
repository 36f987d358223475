"""`ollie-tasks` changes the store from the shell: create, update, done, note, edit, dep, delete.

The commands call the store functions the MCP tools call, so the checks and the events are
the tools' own; most tests run the CLI's `main` in this process on a real SQLite file, and
the slow ones run it as a process (also on PostgreSQL) and beside a real MCP server.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from ollie_nb.tasks import TaskStore, open_store
from ollie_nb.tasks.cli import build_parser, main
from tests.support.tasks_harness import cli, connect, ok

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""A control character a terminal would act on (tab and newline are fine)."""


class Run(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture
def shell(db: Path, capsys: pytest.CaptureFixture[str]):
    """Run `ollie-tasks --db DB ARGS...` in this process; its exit status and output."""

    def run(*args: str) -> Run:
        code = main(["--db", str(db), *args])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def _events(db: Path) -> list[tuple[str, str, dict[str, object]]]:
    with TaskStore(db, create=False) as store:
        return [(e.type, e.task, e.payload) for e in store.events(0, 1000)]


def test_create_prints_only_the_id_and_makes_a_new_database(db: Path, shell) -> None:
    assert not db.exists()
    goal = shell("create", "Ship it", "--label", "goal")
    assert goal.code == 0 and goal.err == ""
    assert re.fullmatch(r"t-[0-9a-z]{5}\n", goal.out)
    assert db.stat().st_mode & 0o777 == 0o600


def test_create_takes_parent_blockers_body_and_labels(db: Path, shell) -> None:
    g = shell("create", "Goal").out.strip()
    a = shell("create", "Build", "--parent", g).out.strip()
    b = shell("create", "Lint", "--parent", g).out.strip()
    made = shell(
        "create", "Test", "--parent", g, "--blocker", a, "--blocker", b,
        "--body", "all of it", "--label", "ci", "--label", "slow", "--json",
    )  # fmt: skip
    task = json.loads(made.out)
    assert (task["title"], task["body"], task["labels"]) == ("Test", "all of it", ["ci", "slow"])
    assert task["parent"]["id"] == g and [r["id"] for r in task["blockers"]] == [a, b]
    assert _events(db)[-1] == (
        "created",
        task["id"],
        {"title": "Test", "parent": g, "blockers": [a, b], "labels": ["ci", "slow"]},
    )


@pytest.fixture
def chain(db: Path) -> dict[str, str]:
    """A goal with two steps, b after a; written straight to the store."""
    with TaskStore(db) as store:
        g = store.create("Goal")
        a = store.create("A", parent=g)
        b = store.create("B", parent=g, blockers=[a])
    return {"g": g, "a": a, "b": b}


def test_done_says_what_it_unblocked_and_closes_the_goal(
    db: Path, chain: dict[str, str], shell
) -> None:
    g, a, b = chain["g"], chain["a"], chain["b"]
    first = shell("done", a, "--note", "built")
    assert first == Run(0, f"ok: {a}  [done]  A\nunblocked: {b}  [open]  B\n", "")
    last = json.loads(shell("done", b, "--json").out)
    assert last["task"]["status"] == "done"
    assert last["unblocked"] == []
    assert [(t, task) for t, task, _ in _events(db)[3:]] == [
        ("status_changed", a),
        ("unblocked", b),
        ("updated", a),
        ("status_changed", b),
        ("status_changed", g),
    ]
    with TaskStore(db) as store:
        assert [n.text for n in store.get(a).notes] == ["built"]
        assert store.get(g).status == "done"


def test_update_and_note_need_no_claim_token_at_the_shell(
    db: Path, chain: dict[str, str], shell
) -> None:
    a = chain["a"]
    with TaskStore(db) as store:
        assert store.claim(a, "ann", 600).token  # a claim made over MCP, with a token
    noted = shell("note", a, "seen from the shell")
    assert noted == Run(0, f"ok: {a}  [in_progress]  A\n", "")
    moved = shell("update", a, "--status", "open", "--as", "bob")
    assert moved == Run(0, f"ok: {a}  [open]  A\n", "")
    assert _events(db)[-3:] == [
        ("updated", a, {"note": "seen from the shell"}),
        ("status_changed", a, {"from": "in_progress", "to": "open"}),
        ("updated", a, {"assignee": "bob"}),
    ]
    empty = shell("update", a)
    assert empty.code == 1 and empty.err == (
        "ollie-tasks: error: nothing to update: give status, assignee or note\n"
    )


def test_edit_revises_title_body_and_parent(db: Path, chain: dict[str, str], shell) -> None:
    b = chain["b"]
    edited = shell("edit", b, "--title", "B2", "--body", "new", "--parent", "-", "--json")
    task = json.loads(edited.out)
    assert (task["title"], task["body"], task["parent"]) == ("B2", "new", None)
    assert _events(db)[-1][:2] == ("edited", b)


def test_dep_adds_refuses_a_cycle_and_removes(db: Path, chain: dict[str, str], shell) -> None:
    g, a, b = chain["g"], chain["a"], chain["b"]
    assert shell("dep", a, "--on", g) == Run(0, f"ok: {a} is now blocked by {g}\n", "")
    assert shell("dep", a, "--on", g).out == f"ok: {a} is already blocked by {g}\n"
    cycle = shell("dep", a, "--on", b)
    assert cycle.code == 1 and cycle.out == ""
    assert cycle.err.startswith(f"ollie-tasks: error: refused: {b} already waits on {a}")
    assert len(cycle.err.splitlines()) == 1
    removed = shell("dep", b, "--on", a, "--remove")
    assert removed.out == f"ok: {b} is no longer blocked by {a}\nunblocked: {b}  [open]  B\n"
    answer = json.loads(shell("dep", a, "--on", g, "--remove", "--json").out)
    unblocked = [{"id": a, "status": "open", "title": "A"}]
    assert answer == {"id": a, "blocker": g, "removed": True, "unblocked": unblocked}
    assert [(t, task) for t, task, _ in _events(db)[3:]] == [
        ("dep_added", a),
        ("dep_removed", b),
        ("unblocked", b),
        ("dep_removed", a),
        ("unblocked", a),
    ]


def test_delete_refuses_a_task_with_children_unless_recursive(
    db: Path, chain: dict[str, str], shell
) -> None:
    g, a, b = chain["g"], chain["a"], chain["b"]
    refused = shell("delete", g)
    assert refused.code == 1 and refused.out == ""
    assert refused.err == (
        f"ollie-tasks: error: {g} has 2 child tasks ({', '.join(sorted([a, b]))}): delete "
        "them first or "
        "delete with recursive=true\n"
    )
    assert shell("delete", b, "--json").out == json.dumps({"deleted": [b]}, indent=2) + "\n"
    assert shell("delete", g, "--recursive") == Run(0, f"deleted {g} and 1 subtask: {a}\n", "")
    assert [(t, task) for t, task, _ in _events(db)[3:]] == [
        ("deleted", b),
        ("deleted", a),
        ("deleted", g),
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("create", "T\x1b]52;c;cm0gLXJmIH4=\x07"),
        ("create", "T", "--body", "b\x9b31m"),
        ("create", "T", "--label", "l\x1b[2J"),
        ("create", "T\udc9b"),  # a byte that is not UTF-8, as Python passes it on
        ("create", "T", "--blocker", "t-zzzzz"),
        ("create", " "),
        ("note", "{a}", "n\x07"),
        ("update", "{a}", "--as", "a\x1b[2Jn"),
        ("edit", "{a}", "--title", "e\x1b[2J"),
        ("dep", "{a}", "--on", "{a}"),
        ("delete", "t-\x1b[2J"),
        ("done", "t-zzzzz"),
    ],
)
def test_a_refusal_is_one_escaped_line_exit_1_and_changes_nothing(
    db: Path, chain: dict[str, str], shell, args: tuple[str, ...]
) -> None:
    before = _events(db)
    refused = shell(*(arg.format(**chain) for arg in args))
    assert refused.code == 1 and refused.out == ""
    assert refused.err.startswith("ollie-tasks: error: ") and len(refused.err.splitlines()) == 1
    assert not RAW.search(refused.err) and "\udc9b" not in refused.err
    assert _events(db) == before


def test_a_usage_error_shows_control_characters_escaped(
    db: Path, chain: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--db", str(db), "note", chain["a"], "text", "\x1b[2Jmore"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: \\x1b[2Jmore" in err and not RAW.search(err)


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_shell_and_the_mcp_tools_answer_and_log_alike(tmp_path: Path) -> None:
    """One sequence of changes, once by `ollie-tasks` processes, once by a server's tools."""
    by_shell, by_tools = tmp_path / "shell.db", tmp_path / "tools.db"
    async with connect(by_tools) as client:

        async def tool(name: str, **args: object) -> str:
            return await ok(client, f"task_{name}", **args)

        def shell(*args: str) -> str:
            run = cli(by_shell, *args)
            assert run.returncode == 0 and run.stderr == "", run.stderr
            return run.stdout.rstrip("\n")

        answers = [(shell("create", "Goal"), await tool("create", title="Goal"))]
        g = answers[0]
        answers.append(
            (shell("create", "A", "--parent", g[0]), await tool("create", title="A", parent=g[1]))
        )
        a = answers[1]
        steps = [
            (("create", "B", "--blocker", a[0]), ("create", {"title": "B", "blockers": [a[1]]})),
            (("note", a[0], "n"), ("update", {"id": a[1], "note": "n"})),
            (("dep", g[0], "--on", a[0]), ("dep", {"id": g[1], "blocker": a[1]})),
            (("done", a[0]), ("update", {"id": a[1], "status": "done"})),
            (("edit", a[0], "--title", "A2"), ("edit", {"id": a[1], "title": "A2"})),
            (("dep", g[0], "--on", a[0], "--remove"), ("dep", {"id": g[1], "blocker": a[1], "remove": True})),
            (("delete", g[0], "--recursive"), ("delete", {"id": g[1], "recursive": True})),
        ]  # fmt: skip
        for shell_args, (name, args) in steps:
            answers.append((shell(*shell_args), await tool(name, **args)))
    same = {a[1]: a[0], g[1]: g[0], answers[2][1]: answers[2][0]}
    # Tasks a change unblocks come in id order: the same set, maybe in another order.
    for said, told in answers[3:]:
        assert sorted(said.splitlines()) == sorted(_renamed(told, same).splitlines())
    with open_store(by_shell, create=False) as ours, open_store(by_tools, create=False) as theirs:
        logged = [json.dumps([e.type, e.task, e.payload]) for e in ours.events(0, 1000)]
        expected = [
            _renamed(json.dumps([e.type, e.task, e.payload]), same) for e in theirs.events(0, 1000)
        ]
    assert [json.loads(e)[0] for e in logged] == [json.loads(e)[0] for e in expected]
    assert sorted(logged) == sorted(expected)


def _renamed(text: str, ids: dict[str, str]) -> str:
    """`text` with each task id of one store replaced by its twin's in the other."""
    return re.sub(r"t-[0-9a-z]{5,}", lambda m: ids.get(m.group(), m.group()), text)


def test_changes_from_the_shell_on_postgresql(pg_cluster) -> None:
    url = pg_cluster.new_database()
    goal = cli(url, "create", "On PostgreSQL").stdout.strip()
    step = cli(url, "create", "Step", "--parent", goal).stdout.strip()
    assert cli(url, "dep", goal, "--on", step).returncode == 0
    done = cli(url, "done", step)
    assert done.stdout == f"ok: {step}  [done]  Step\nunblocked: {goal}  [open]  On PostgreSQL\n"
    refused = cli(url, "delete", goal)
    assert refused.returncode == 1 and "1 child task" in refused.stderr
    assert cli(url, "delete", goal, "--recursive").returncode == 0
    with open_store(url) as store:
        assert [e.type for e in store.events(0, 100)][-2:] == ["deleted", "deleted"]
        assert store.list("all") == []


def test_every_subcommand_is_in_the_docs_cli_table() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "TASK_SERVER.md").read_text()
    block = doc.split("ollie-tasks [--db PATH|URL] COMMAND", 1)[1].split("```", 1)[0]
    listed = {
        line.split()[0] for line in block.splitlines() if line.startswith("  ") and line[2] != " "
    }
    (commands,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == listed
