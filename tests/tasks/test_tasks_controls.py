"""Control characters: refused in stored text over MCP, made visible in every CLI output.

An ESC or BEL in a shared task's title would drive the terminal of whoever lists it (an
OSC 52 sequence writes the reader's clipboard); tab, newline and carriage return stay.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from ollie_nb.tasks import open_store
from tests.support.tasks_harness import cli, connect, fails, ok

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What a terminal would act on in a line of output (newline and tab aside)."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    async with connect(tmp_path_factory.mktemp("db") / "tasks.db") as c:
        yield c


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "args", "field", "char"),
    [
        ("task_create", {"title": f"Fix {OSC52}"}, "title", "\\x1b"),
        ("task_create", {"title": "ok", "body": "ring\x07"}, "body", "\\x07"),
        ("task_create", {"title": "ok", "labels": ["a\x9bb"]}, "label", "\\x9b"),
        ("task_update", {"note": "del\x7f"}, "note", "\\x7f"),
        ("task_update", {"assignee": "m\x1b[2J"}, "assignee", "\\x1b"),
        ("task_update", {"note": "nul\x00"}, "note", "\\x00"),
        ("task_claim", {"assignee": "\x85ann"}, "assignee", "\\x85"),
        ("task_edit", {"title": "form\x0cfeed"}, "title", "\\x0c"),
        ("task_edit", {"body": "vt\x0b"}, "body", "\\x0b"),
    ],
)
async def test_control_characters_are_refused_naming_the_field(
    client: Client, tool: str, args: dict[str, object], field: str, char: str
) -> None:
    if tool != "task_create":
        args = {"id": await ok(client, "task_create", title="Target"), **args}
    refused = await fails(client, tool, **args)
    assert f"{field} holds the control character '{char}' at" in refused, refused
    assert "\n" not in refused.strip()


@pytest.mark.anyio
async def test_tab_newline_and_carriage_return_are_kept(client: Client) -> None:
    body = "col\tumn\r\nnext line"
    task = await ok(client, "task_create", title="Plain\ttitle", body=body)
    await ok(client, "task_update", id=task, note="a\tnote\r\nsecond")
    read = json.loads(await ok(client, "task_read", id=task, format="json"))
    assert (read["title"], read["body"]) == ("Plain\ttitle", body)


@pytest.mark.slow
def test_every_cli_view_shows_control_characters_escaped(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    with open_store(db) as store:
        task = store.create("placeholder", labels=["x"])
        store.update(task, status="in_progress", assignee="ann", note="n")
    # Text written straight into the database (trusted, or from before the check).
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE tasks SET title = ?, body = ?, assignee = ? WHERE id = ?",
        (f"T{OSC52}", "b\x9b31m\rover", "a\x1b[2Jn", task),
    )
    conn.execute("UPDATE notes SET text = ?", ("note\x07",))
    conn.execute(
        "INSERT INTO events (time, type, task, payload) VALUES ('t', 'edited', ?, ?)",
        (task, '{"title": "E\x9b2J"}'),
    )
    conn.commit()
    conn.close()
    views = [
        ["list", "--status", "all"],
        ["ready"],
        ["show", task],
        ["tree"],
        ["events"],
        ["show", task, "--json"],
        ["list", "--status", "all", "--json"],
        ["events", "--json"],
        ["tree", "--json"],
    ]
    for view in views:
        done = cli(db, *view)
        assert done.returncode == 0, (view, done.stderr)
        assert not RAW.search(done.stdout), (view, done.stdout)
        if "--json" in view:
            json.loads(done.stdout)
    shown = cli(db, "show", task).stdout
    assert "T\\x1b]52;c;cm0gLXJmIH4=\\x07" in shown and "b\\x9b31m\\x0dover" in shown
    assert "note\\x07" in shown and "@a\\x1b[2Jn" in cli(db, "list", "--status", "all").stdout
    assert "E\\x9b2J" in cli(db, "events").stdout
    assert json.loads(cli(db, "show", task, "--json").stdout)["title"] == f"T{OSC52}"
    refused = cli(db, "claim", "t-zzzzz", "--as", "a\x1b[2Jn")
    assert refused.returncode == 1 and not RAW.search(refused.stderr)
