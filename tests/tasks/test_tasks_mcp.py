"""The task server through the official MCP client over stdio: every tool and every error path."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.tasks_harness import (
    PYTHON_M,
    claim_token,
    connect,
    fails,
    free_port,
    ok,
    wait_listening,
)

pytestmark = pytest.mark.anyio

ID_RE = r"t-[0-9a-hjkmnp-tv-z]{5}"
TOOLS = {
    "task_create",
    "task_list",
    "task_read",
    "task_update",
    "task_edit",
    "task_delete",
    "task_dep",
    "task_events",
    "task_claim",
    "task_heartbeat",
    "task_claim_next",
    "task_reopen",
    "task_ask",
    "task_inbox",
    "task_answer",
    "task_whoami",
}


@pytest.fixture(scope="module")
async def client(module_db: str | Path) -> AsyncIterator[Client]:
    """One server process per backend for the whole module; each test makes what it changes."""
    async with connect(module_db) as c:
        yield c


@pytest.fixture(scope="module")
async def graph(client: Client) -> dict[str, str]:
    """Goal g with steps a, b (after a), c (after b); the tests using it never change it."""
    g = await ok(client, "task_create", title="Goal")
    a = await ok(client, "task_create", title="Step A", parent=g)
    b = await ok(client, "task_create", title="Step B", parent=g, blockers=[a])
    c = await ok(client, "task_create", title="Step C", parent=g, blockers=[b])
    return {"g": g, "a": a, "b": b, "c": c}


async def last_seq(client: Client) -> int:
    """The newest seq: pages of events (bounded by size too) read to the end."""
    page: dict[str, Any] = {"next": 0, "more": True}
    while page["more"]:
        args = {"since": page["next"], "limit": 1000, "format": "page"}
        page = json.loads(await ok(client, "task_events", **args))
    return page["next"]


async def events_since(client: Client, seq: int) -> list[dict[str, Any]]:
    return json.loads(await ok(client, "task_events", since=seq, limit=1000))


# --- the task_create contract --------------------------------------------------------------


async def test_task_create_returns_exactly_the_id_as_text(client: Client) -> None:
    result = await client.call_tool("task_create", {"title": "Write the parser"})
    assert not result.is_error
    assert result.structured_content is None
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "structuredContent" not in wire
    assert wire["content"] == [{"type": "text", "text": result.content[0].text}]
    assert re.fullmatch(ID_RE, result.content[0].text)


async def test_tools_are_listed_with_typed_arguments(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    create = tools["task_create"].input_schema
    assert create["required"] == ["title"]
    assert set(create["properties"]) == {"title", "body", "parent", "blockers", "labels"}
    assert create["properties"]["blockers"]["type"] == "array"
    assert create["properties"]["blockers"]["items"] == {"type": "string"}
    assert tools["task_list"].input_schema["properties"]["status"]["default"] == "open"
    for leased in ("task_claim", "task_heartbeat"):
        schema = tools[leased].input_schema
        assert schema["required"] == ["id", "assignee"]
        assert schema["properties"]["lease"]["type"] == "number"
        assert schema["properties"]["lease"]["default"] == 300
    assert tools["task_read"].annotations.read_only_hint is True
    assert tools["task_delete"].annotations.destructive_hint is True


# --- error paths: a readable message, and nothing changed ----------------------------------

ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("task_create", {"title": ""}, "title is empty"),
    ("task_create", {"title": "   "}, "title is empty"),
    ("task_create", {"title": "two\nlines"}, "title must be one line"),
    ("task_create", {"title": "x" * 501}, "the limit is 500"),
    ("task_create", {"title": "x", "body": "y" * (64 * 1024 + 1)}, "the limit is 65536"),
    ("task_create", {"title": "x", "parent": "t-zzzzz"}, "no task with id 't-zzzzz'"),
    ("task_create", {"title": "x", "blockers": ["{a}", "t-zzzzz"]}, "no task with id 't-zzzzz'"),
    ("task_create", {"title": "x", "labels": ["two words"]}, "bad label"),
    ("task_create", {"body": "no title"}, "title"),
    ("task_list", {"status": "bogus"}, "bad status 'bogus'"),
    ("task_list", {"parent": "t-zzzzz"}, "no task with id 't-zzzzz'"),
    ("task_read", {"id": "t-zzzzz"}, "no task with id 't-zzzzz'"),
    ("task_read", {"id": " "}, "id is empty"),
    ("task_update", {"id": "t-zzzzz", "status": "done"}, "no task with id 't-zzzzz'"),
    ("task_update", {"id": "{a}", "status": "finished"}, "bad status 'finished'"),
    ("task_update", {"id": "{a}"}, "nothing to update"),
    ("task_update", {"id": "{a}", "note": "n" * (16 * 1024 + 1)}, "note is 16385 bytes"),
    ("task_edit", {"id": "t-zzzzz", "title": "x"}, "no task with id 't-zzzzz'"),
    ("task_edit", {"id": "{a}"}, "nothing to edit"),
    ("task_edit", {"id": "{a}", "title": "x" * 501}, "the limit is 500"),
    ("task_edit", {"id": "{a}", "parent": "t-zzzzz"}, "no task with id 't-zzzzz'"),
    ("task_edit", {"id": "{a}", "parent": "{a}"}, "cannot be its own parent"),
    ("task_edit", {"id": "{g}", "parent": "{a}"}, "would create a loop"),
    ("task_delete", {"id": "t-zzzzz"}, "no task with id 't-zzzzz'"),
    ("task_delete", {"id": "{g}"}, "has 3 child tasks"),
    ("task_dep", {"id": "{a}", "blocker": "{a}"}, "cannot block itself"),
    ("task_dep", {"id": "{a}", "blocker": "{b}"}, "would be a cycle"),
    ("task_dep", {"id": "{a}", "blocker": "{c}"}, "would be a cycle"),
    ("task_dep", {"id": "{a}", "blocker": "t-zzzzz"}, "no task with id 't-zzzzz'"),
    ("task_dep", {"id": "t-zzzzz", "blocker": "{a}"}, "no task with id 't-zzzzz'"),
    ("task_dep", {"id": "{c}", "blocker": "{a}", "remove": True}, "is not blocked by"),
    ("task_events", {"limit": 0}, "limit must be between 1 and 1000"),
    ("task_events", {"since": -1}, "since must be 0 or"),
    ("task_claim", {"id": "{a}", "assignee": "x", "lease": -1}, "lease is -1 s: give 0"),
    ("task_claim", {"id": "{a}", "assignee": "x", "lease": 10**7}, "lease is 1e+07 s"),
    ("task_heartbeat", {"id": "{a}", "assignee": "x"}, "is open, not claimed by x"),
    ("task_heartbeat", {"id": "t-zzzzz", "assignee": "x"}, "no task with id 't-zzzzz'"),
    ("task_heartbeat", {"id": "{a}", "assignee": ""}, "assignee is empty"),
]


@pytest.mark.parametrize(
    ("tool", "args", "expected"), ERRORS, ids=[f"{t}-{m[:24]}" for t, _, m in ERRORS]
)
async def test_error_is_a_readable_tool_error_and_changes_nothing(
    client: Client, graph: dict[str, str], tool: str, args: dict[str, Any], expected: str
) -> None:
    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.format(**graph) if value.startswith("{") else value
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    before = await last_seq(client)
    message = await fails(client, tool, **{k: fill(v) for k, v in args.items()})
    assert expected in message
    assert await last_seq(client) == before


# --- each tool doing its job ---------------------------------------------------------------


async def test_ready_and_unblocked(client: Client) -> None:
    goal = await ok(client, "task_create", title="Ship it")
    a = await ok(client, "task_create", title="Build", parent=goal)
    b = await ok(client, "task_create", title="Test", parent=goal, blockers=[a])
    c = await ok(client, "task_create", title="Release", parent=goal, blockers=[a, b])
    seq = await last_seq(client)

    ready = await ok(client, "task_list", status="ready", parent=goal)
    assert [line.split()[0] for line in ready.splitlines()] == [a]

    done_a = await ok(client, "task_update", id=a, status="done")
    assert done_a.splitlines() == [f"ok: {a}  [done]  Build", f"unblocked: {b}  [open]  Test"]
    ready = await ok(client, "task_list", status="ready", parent=goal)
    assert [line.split()[0] for line in ready.splitlines()] == [b]

    done_b = await ok(client, "task_update", id=b, status="done")
    assert f"unblocked: {c}  [open]  Release" in done_b
    assert c in await ok(client, "task_list", status="ready")

    kinds = [(e["type"], e["task"], e["payload"]) for e in await events_since(client, seq)]
    assert kinds == [
        ("status_changed", a, {"from": "open", "to": "done"}),
        ("unblocked", b, {"by": a, "reason": "done"}),
        ("status_changed", b, {"from": "open", "to": "done"}),
        ("unblocked", c, {"by": b, "reason": "done"}),
    ]


async def test_task_list_lines_and_filters(client: Client) -> None:
    goal = await ok(client, "task_create", title="Plan", labels=["q3"])
    a = await ok(client, "task_create", title="Draft", parent=goal, labels=["docs", "q3"])
    b = await ok(client, "task_create", title="Review", parent=goal, blockers=[a])
    await ok(client, "task_update", id=a, status="in_progress", assignee="ana")

    lines = (await ok(client, "task_list", status="all", parent=goal)).splitlines()
    assert lines == [
        f"{a}  in_progress  Draft  (parent {goal}; @ana; #docs #q3)",
        f"{b}  open         Review  (waits on {a}; parent {goal})",
    ]
    open_ids = [ln.split()[0] for ln in (await ok(client, "task_list")).splitlines()]
    assert goal in open_ids and b in open_ids and a not in open_ids
    labelled = await ok(client, "task_list", status="all", label="q3")
    assert [ln.split()[0] for ln in labelled.splitlines()] == [goal, a]
    assert await ok(client, "task_list", status="deferred", parent=goal) == (
        f"no deferred tasks under {goal}"
    )


async def test_task_read_shows_everything_around_a_task(client: Client) -> None:
    goal = await ok(client, "task_create", title="Goal R")
    a = await ok(client, "task_create", title="First", parent=goal)
    b = await ok(
        client,
        "task_create",
        title="Second",
        body="Line one\nLine two",
        parent=goal,
        blockers=[a],
        labels=["x"],
    )
    c = await ok(client, "task_create", title="Third", blockers=[b])
    kid = await ok(client, "task_create", title="Sub", parent=b)
    await ok(client, "task_update", id=b, assignee="bo", note="started on it")

    text = await ok(client, "task_read", id=b.upper())  # ids are case-insensitive
    assert text.startswith(f"{b}  Second\nstatus: open (waiting on 1 blocker)\n")
    for part in (
        f"parent: {goal}  [open]  Goal R",
        "assignee: bo",
        "labels: x",
        f"blocked by:\n  {a}  [open]  First",
        f"blocks:\n  {c}  [open]  Third",
        f"children:\n  {kid}  [open]  Sub",
        "\n\nLine one\nLine two\n",
        "started on it",
    ):
        assert part in text
    assert "status: open (ready)" in await ok(client, "task_read", id=a)


async def test_task_update_status_assignee_and_note(client: Client) -> None:
    t = await ok(client, "task_create", title="Update me")
    seq = await last_seq(client)
    assert await ok(client, "task_update", id=t, status="in_progress") == (
        f"ok: {t}  [in_progress]  Update me"
    )
    await ok(client, "task_update", id=t, status="failed", note="flaky network")
    assert ", closed 20" in await ok(client, "task_read", id=t)
    await ok(client, "task_update", id=t, status="open", assignee="kim")
    text = await ok(client, "task_read", id=t)
    assert "closed" not in text and "assignee: kim" in text and "flaky network" in text
    kinds = [(e["type"], e["payload"]) for e in await events_since(client, seq)]
    assert kinds == [
        ("status_changed", {"from": "open", "to": "in_progress"}),
        ("status_changed", {"from": "in_progress", "to": "failed"}),
        ("updated", {"note": "flaky network"}),
        ("status_changed", {"from": "failed", "to": "open"}),
        ("updated", {"assignee": "kim"}),
    ]


async def test_task_edit_title_body_parent(client: Client) -> None:
    g1 = await ok(client, "task_create", title="Goal one")
    g2 = await ok(client, "task_create", title="Goal two")
    t = await ok(client, "task_create", title="Old title", body="old body", parent=g1)
    seq = await last_seq(client)
    result = await ok(client, "task_edit", id=t, title="New title", body="new body", parent=g2)
    assert result == f"ok: {t}  [open]  New title"
    text = await ok(client, "task_read", id=t)
    assert "new body" in text and f"parent: {g2}" in text
    assert t not in await ok(client, "task_list", parent=g1)
    await ok(client, "task_edit", id=t, parent="-")
    assert "parent:" not in await ok(client, "task_read", id=t)
    payloads = [e["payload"] for e in await events_since(client, seq)]
    assert payloads == [{"title": "New title", "body": True, "parent": g2}, {"parent": ""}]


async def test_task_delete_leaf_subtree_and_edges(client: Client) -> None:
    goal = await ok(client, "task_create", title="Doomed goal")
    a = await ok(client, "task_create", title="Doomed step", parent=goal)
    inner = await ok(client, "task_create", title="Doomed leaf", parent=a)
    waiting = await ok(client, "task_create", title="Survivor", blockers=[a])
    leaf = await ok(client, "task_create", title="Lonely")
    seq = await last_seq(client)

    assert await ok(client, "task_delete", id=leaf) == f"deleted {leaf}"
    result = await ok(client, "task_delete", id=goal, recursive=True)
    assert result == f"deleted {goal} and 2 subtasks: {inner}, {a}"
    for gone in (leaf, goal, a, inner):
        assert "no task with id" in await fails(client, "task_read", id=gone)
    # Deleting its only unfinished blocker frees the survivor, and its edge is gone.
    assert "blocked by" not in await ok(client, "task_read", id=waiting)
    assert waiting in await ok(client, "task_list", status="ready")
    events = [(e["type"], e["task"]) for e in await events_since(client, seq)]
    assert events == [
        ("deleted", leaf),
        ("deleted", inner),
        ("deleted", a),
        ("deleted", goal),
        ("unblocked", waiting),
    ]


async def test_task_dep_add_and_remove(client: Client) -> None:
    a = await ok(client, "task_create", title="Dep A")
    b = await ok(client, "task_create", title="Dep B")
    seq = await last_seq(client)
    assert await ok(client, "task_dep", id=b, blocker=a) == f"ok: {b} is now blocked by {a}"
    assert await ok(client, "task_dep", id=b, blocker=a) == f"ok: {b} is already blocked by {a}"
    assert b not in await ok(client, "task_list", status="ready")
    removed = await ok(client, "task_dep", id=b, blocker=a, remove=True)
    assert removed == f"ok: {b} is no longer blocked by {a}\nunblocked: {b}  [open]  Dep B"
    assert b in await ok(client, "task_list", status="ready")
    kinds = [(e["type"], e["task"], e["payload"]) for e in await events_since(client, seq)]
    assert kinds == [
        ("dep_added", b, {"blocker": a}),
        ("dep_removed", b, {"blocker": a}),
        ("unblocked", b, {"by": a, "reason": "dep_removed"}),
    ]


async def test_task_events_pages_by_seq(client: Client) -> None:
    seq = await last_seq(client)
    ids = [await ok(client, "task_create", title=f"event {i}") for i in range(5)]
    first = await events_since(client, seq)
    assert [e["task"] for e in first] == ids
    assert all(
        e["type"] == "created" and set(e) == {"seq", "time", "type", "task", "payload"}
        for e in first
    )
    assert [e["seq"] for e in first] == sorted(e["seq"] for e in first)
    page = json.loads(await ok(client, "task_events", since=first[1]["seq"], limit=2))
    assert [e["task"] for e in page] == ids[2:4]
    assert first[0]["payload"] == {"title": "event 0", "parent": "", "blockers": [], "labels": []}


# --- the events resource and its update signal ---------------------------------------------


async def test_events_resource_lists_recent_events(client: Client) -> None:
    listed = {str(r.uri): r for r in (await client.list_resources()).resources}
    assert listed["tasks://events"].mime_type == "application/json"
    t = await ok(client, "task_create", title="Seen in the resource")
    contents = (await client.read_resource("tasks://events")).contents
    events = json.loads(contents[0].text)
    assert events[-1]["task"] == t and events[-1]["type"] == "created"


async def test_subscriber_gets_a_signal_after_task_create(client: Client) -> None:
    async with client.listen(resource_subscriptions=["tasks://events"]) as sub:
        await ok(client, "task_create", title="Wake the subscriber")
        with anyio.fail_after(5):
            event = await sub.__anext__()
    assert str(event.uri) == "tasks://events"


@pytest.mark.slow
async def test_subscriber_gets_a_signal_for_a_change_by_another_process(
    any_db: str | Path,
) -> None:
    db = any_db
    async with (
        connect(db) as watcher,
        connect(db) as writer,
        watcher.listen(resource_subscriptions=["tasks://events"]) as sub,
    ):
        t = await ok(writer, "task_create", title="Made elsewhere")
        with anyio.fail_after(5):  # data_version every 25 ms, or NOTIFY
            await sub.__anext__()
        events = json.loads(await ok(watcher, "task_events"))
    assert [e["task"] for e in events] == [t]


# --- persistence and other transports ------------------------------------------------------


@pytest.mark.slow
async def test_tasks_survive_restart_and_are_shared_between_processes(any_db: str | Path) -> None:
    db = any_db
    async with connect(db) as first:
        goal = await ok(first, "task_create", title="Persistent goal")
        step = await ok(first, "task_create", title="Persistent step", parent=goal, blockers=[goal])
        async with connect(db) as second:  # a second server on the same file, at the same time
            assert f"children:\n  {step}  [open]  Persistent step" in await ok(
                second, "task_read", id=goal
            )
            await ok(second, "task_update", id=goal, status="done")
        assert step in await ok(first, "task_list", status="ready")
    async with connect(db) as restarted:
        listing = await ok(restarted, "task_list", status="all")
        assert listing.splitlines() == [
            f"{goal}  done         Persistent goal",
            f"{step}  open         Persistent step  (parent {goal})",
        ]
        types = [e["type"] for e in json.loads(await ok(restarted, "task_events"))]
        assert types == ["created", "created", "status_changed", "unblocked"]


@pytest.mark.slow
async def test_legacy_handshake_gives_the_same_create_result(db: Path) -> None:
    async with connect(db, mode="legacy") as legacy:
        result = await legacy.call_tool("task_create", {"title": "Old client"})
        assert legacy.session.protocol_version < "2026"
    assert not result.is_error and result.structured_content is None
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["content"] == [{"type": "text", "text": result.content[0].text}]
    assert re.fullmatch(ID_RE, result.content[0].text)


@pytest.mark.slow
async def test_streamable_http_requires_the_bearer_token(any_db: str | Path) -> None:
    # On PostgreSQL with a password in the URL (trust auth ignores it): never printed.
    db = str(any_db).replace("postgres@", "postgres:Pw-in-url@")
    port = free_port()
    # Both secrets from the environment, the form that keeps them out of the process list.
    env = {**os.environ, "OLLIE_TASKS_TOKEN": "tok-123", "OLLIE_TASKS_DB": str(db)}
    proc = subprocess.Popen(
        [*PYTHON_M, "serve", "--http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await wait_listening(proc, port)
        async with httpx.AsyncClient() as http:
            # The whole header must be the token: not a prefix of it, nor more than it.
            for value in (None, "Bearer wrong", "Bearer tok-123anything", "Bearer tok-12",
                          "Bearer tok-123,x", "bearer tok-123", "tok-123"):  # fmt: skip
                headers = {} if value is None else {"Authorization": value}
                refused = await http.post(url, json={}, headers=headers)
                assert refused.status_code == 401, (value, refused.text)
        authed = httpx2.AsyncClient(headers={"Authorization": "Bearer tok-123"})
        async with authed, Client(streamable_http_client(url, http_client=authed)) as client:
            task_id = await ok(client, "task_create", title="Over HTTP")
            assert await ok(client, "task_list") == f"{task_id}  open         Over HTTP"
    finally:
        proc.terminate()
        proc.wait(10)
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode()
    assert "tok-123" not in stderr and "WARNING" not in stderr
    assert "Pw-in-url" not in stderr and "serving MCP on" in stderr


@pytest.mark.slow
async def test_http_without_a_token_prints_a_fresh_one_and_warns_off_loopback(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "OLLIE_TASKS_TOKEN"}
    proc = subprocess.Popen(
        [*PYTHON_M, "serve", "--db", str(tmp_path / "t.db"), "--http", "--host", "0.0.0.0",
         "--port", str(port)],
        stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline() for _ in range(3)]
    finally:
        proc.terminate()
        proc.wait(10)
    assert "WARNING: listening on 0.0.0.0, not loopback" in lines[0]
    token = re.search(r"this run's token is: (\S+)", lines[1])
    assert token and len(token.group(1)) >= 32
    assert f"http://0.0.0.0:{port}/mcp" in lines[2]


# --- claims and JSON forms ------------------------------------------------------------------


async def test_task_claim_takes_a_ready_task_once(client: Client) -> None:
    first = await ok(client, "task_create", title="Claim me")
    later = await ok(client, "task_create", title="After", blockers=[first])
    seq = await last_seq(client)
    claimed = await ok(client, "task_claim", id=first, assignee="ann")
    assert re.fullmatch(
        rf"claimed: {first}  \[in_progress\]  Claim me @ann, lease ends \S+Z\n"
        r"token: \S{20,}\nlease: 300 s",
        claimed,
    )
    token = claim_token(claimed)
    assert "already claimed by ann" in await fails(client, "task_claim", id=first, assignee="bob")
    # A retry by the holder is fine, and answers the same token.
    assert (
        claim_token(await ok(client, "task_claim", id=first, assignee="ann", token=token)) == token
    )
    assert f"waits on {first}" in await fails(client, "task_claim", id=later, assignee="bob")
    await ok(client, "task_update", id=first, status="done", token=token)
    assert "done, not open" in await fails(client, "task_claim", id=first, assignee="ann")
    assert "assignee is empty" in await fails(client, "task_claim", id=later, assignee=" ")
    types = [(e["type"], e["task"]) for e in await events_since(client, seq)]
    assert types == [
        ("status_changed", first),
        ("claimed", first),
        ("status_changed", first),
        ("unblocked", later),
    ]


async def test_task_list_and_read_as_json(client: Client) -> None:
    goal = await ok(client, "task_create", title="JSON goal", labels=["js"])
    step = await ok(client, "task_create", title='Step "quoted"', parent=goal, blockers=[goal])
    listed = json.loads(await ok(client, "task_list", label="js", format="json"))
    assert listed["total"] == 1 and "truncated" not in listed
    assert listed["tasks"][0]["id"] == goal and listed["tasks"][0]["labels"] == ["js"]
    children = json.loads(await ok(client, "task_list", parent=goal, format="json"))["tasks"]
    assert [(c["id"], c["title"], c["blockers"], c["parent"]) for c in children] == [
        (step, 'Step "quoted"', [goal], goal)
    ]
    task = json.loads(await ok(client, "task_read", id=step, format="json"))
    assert task["blockers"] == [{"id": goal, "status": "open", "title": "JSON goal"}]
    assert task["ready"] is False and task["parent"]["id"] == goal
    assert "format" in await fails(client, "task_read", id=step, format="xml")


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (None, 401),
        ("Bearer tok-123", 200),
        ("Bearer tok-123anything-appended", 401),
        ("Bearer tok-123 ", 401),
        ("Bearer tok-12", 401),
        ("Bearer ", 401),
        ("tok-123", 401),
    ],
)
async def test_the_http_guard_lets_in_exactly_the_token(header: str | None, status: int) -> None:
    from ollie_nb.tasks._http import RequireBearer

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    headers = [] if header is None else [(b"authorization", header.encode())]
    await RequireBearer(app, {"tok-123": ""})({"type": "http", "headers": headers}, None, send)
    assert sent[0]["status"] == status
