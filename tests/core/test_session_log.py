"""A session file is a log: a save appends what it added; it loads whole, torn or old."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ollie_nb.core import SessionError, list_sessions, sessions_dir
from ollie_nb.core._compact import COMPACT_PROMPT
from ollie_nb.core._session_log import REWRITE_FACTOR, SessionLog
from ollie_nb.core._sessions import SavedSession, load_session
from ollie_nb.llm import Message, OfflineBackend, ToolCall

ROOT = Path(__file__).resolve().parents[2]
SESSION = "20261201-000000-abcd"


def replies(messages, tools) -> str:
    """A model that summarises when asked to compact, else says `fine`."""
    return "SUMMARY" if messages[-1].content.startswith(COMPACT_PROMPT) else "fine"


def file_of(session_id: str) -> Path:
    return sessions_dir() / f"{session_id}.json"


def log_with(path: Path, history: list[Message], redact=None) -> SessionLog:
    log = SessionLog()
    log.save(path, "", SavedSession(path.stem, history).fields(), history, {}, redact)
    return log


@pytest.mark.anyio
async def test_each_turn_appends_its_messages_only_to_the_same_file(make_core):
    core = await make_core(OfflineBackend(replies), autosave=True)
    await core.submit("one")
    path = file_of(core.session.session_id)
    before, inode = path.read_bytes(), path.stat().st_ino
    await core.submit("two")
    after = path.read_bytes()
    assert after.startswith(before) and path.stat().st_ino == inode
    (added,) = after[len(before) :].splitlines()
    record = json.loads(added)
    assert [m["content"] for m in record["add"]] == ["two", "fine"]
    assert record["messages"] == 4 and "history" not in record["set"]
    assert load_session(core.session.session_id).history == core.session.history


@pytest.mark.anyio
async def test_a_tool_round_and_the_turns_end_each_append_their_own_messages(make_core):
    call = ToolCall("call_1", "no_such_tool", "{}")
    core = await make_core(OfflineBackend(turns=["fine", [call], "done"]), autosave=True)
    await core.submit("one")
    path = file_of(core.session.session_id)
    before = path.read_bytes()
    await core.submit("use a tool")
    after = path.read_bytes()
    assert after.startswith(before)
    rounds = [json.loads(line)["add"] for line in after[len(before) :].splitlines()]
    roles = [[m["role"] for m in added] for added in rounds]
    assert roles == [["user", "assistant", "tool"], ["assistant"]]  # the round, then the reply
    assert load_session(core.session.session_id).history == core.session.history


@pytest.mark.anyio
async def test_a_resumed_session_goes_on_appending_to_its_file(make_core):
    first = await make_core(OfflineBackend(replies), autosave=True)
    await first.submit("one")
    await first.submit("two")
    session = first.session.session_id
    path = file_of(session)
    before, inode = path.read_bytes(), path.stat().st_ino
    again = await make_core(OfflineBackend(replies), autosave=True)
    await again.session.resume(session)
    await again.submit("three")
    after = path.read_bytes()
    assert after.startswith(before) and path.stat().st_ino == inode
    assert len(after[len(before) :].splitlines()) == 1
    loaded = load_session(session)
    assert loaded.history == again.session.history and len(loaded.history) == 6
    assert list_sessions()[0].messages == 6


def test_a_torn_last_line_is_dropped_wherever_it_was_cut(tmp_path: Path):
    path = tmp_path / f"{SESSION}.json"
    history = [Message.user("hi"), Message.assistant("hello")]
    log = log_with(path, history)
    history += [Message.user("é, ü and 💡 cut mid-character"), Message.assistant("two")]
    log.save(path, "", SavedSession(SESSION, history).fields(), history, {}, None)
    whole = path.read_bytes()
    last = whole.rindex(b"\n", 0, len(whole) - 1) + 1
    for cut in range(last, len(whole)):
        path.write_bytes(whole[:cut])
        contents = [m.content for m in load_session(SESSION, tmp_path).history]
        assert contents == ["hi", "hello"], cut
        assert list_sessions(tmp_path)[0].messages == 2
    path.write_bytes(whole)
    assert len(load_session(SESSION, tmp_path).history) == 4


HALF_WRITER = """
import sys
from pathlib import Path
from ollie_nb.core import _session_log
from ollie_nb.core._sessions import SavedSession
from ollie_nb.llm import Message

path = Path(sys.argv[1])
history = [Message.user("hi"), Message.assistant("hello " * 2000)]
log = _session_log.SessionLog()
log.save(path, "", SavedSession(path.stem, history).fields(), history, {}, None)
real = _session_log._write_all

def half_then_wait(fd, data):
    real(fd, data[: len(data) // 2])
    print("half", flush=True)
    sys.stdin.read()  # killed here, in the middle of the line

_session_log._write_all = half_then_wait
history += [Message.user("more"), Message.assistant("done")]  # a small line after a big one
log.save(path, "", SavedSession(path.stem, history).fields(), history, {}, None)
"""


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_writer_killed_mid_line_leaves_a_session_that_resumes(make_core):
    directory = sessions_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{SESSION}.json"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    writer = subprocess.Popen(
        [sys.executable, "-c", HALF_WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == b"half\n"
        writer.send_signal(signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait(10)
    assert not path.read_bytes().endswith(b"\n")  # the line is torn
    core = await make_core(OfflineBackend(replies), autosave=True)
    await core.session.resume(SESSION)
    assert [m.content for m in core.session.history] == ["hi", "hello " * 2000]
    await core.submit("again")
    loaded = load_session(SESSION)  # the torn bytes are gone, not left mid-file
    assert [m.content for m in loaded.history] == ["hi", "hello " * 2000, "again", "fine"]


def old_format_file(directory: Path, agent: str) -> Path:
    """A session as the first format wrote it: one indented JSON document."""
    data = {
        "format": 1,
        "id": "20261129-201534-k3f9",
        "name": "old one",
        "created": 1764447334.0,
        "updated": 1764447340.0,
        "agent": agent,
        "agent_path": "",
        "backend": "offline",
        "model": "offline",
        "workdir": str(directory),
        "history": [
            {"role": "user", "content": "hi  there"},
            {"role": "assistant", "content": "hello"},
        ],
        "usage": {"input_tokens": 7, "output_tokens": 3, "requests": 1},
        "plans": [],
        "errors": [],
        "subagents": [
            {
                "name": "helper",
                "step": "",
                "turns": 1,
                "history": [{"role": "user", "content": "sub"}],
            }
        ],
        "runs": [],
        "drafts": {},
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{data['id']}.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


@pytest.mark.anyio
async def test_a_session_of_the_first_format_loads_and_goes_on_as_a_log(make_core):
    core = await make_core(OfflineBackend(replies), autosave=True)
    path = old_format_file(sessions_dir(), core.config.name)
    (listed,) = list_sessions()
    assert (listed.name, listed.messages, listed.first_prompt) == ("old one", 2, "hi there")
    await core.session.resume("old one")
    assert [m.content for m in core.session.history] == ["hi  there", "hello"]
    assert core.session.usage.requests == 1
    assert [m.content for m in core.subagents.children["helper"].history] == ["sub"]
    await core.submit("more")
    assert path.read_bytes().startswith(b'{"format":2')
    loaded = load_session("old one")
    assert loaded.history == core.session.history and loaded.name == "old one"
    assert [m.content for m in loaded.children["helper"]] == ["sub"]
    assert [s["name"] for s in loaded.subagents] == ["helper"]


@pytest.mark.anyio
async def test_rename_compact_and_clear_leave_files_that_load_as_the_session(make_core):
    core = await make_core(OfflineBackend(replies), autosave=True)
    await core.submit("one")
    await core.submit("two")
    session = core.session.session_id
    path = core.session.rename("named")
    assert path is not None and json.loads(path.read_bytes().splitlines()[0])["name"] == "named"
    assert [(s.name, s.messages) for s in list_sessions()] == [("named", 4)]
    done = await core.session.compact()
    assert done.history is not None
    assert len(path.read_bytes().splitlines()) == 2  # header and snapshot: history rewritten
    assert load_session("named").history == core.session.history
    compacted = path.read_bytes()
    core.session.clear()
    await core.submit("fresh")
    assert core.session.session_id != session and path.read_bytes() == compacted
    fresh = load_session(core.session.session_id)
    assert [m.content for m in fresh.history] == ["fresh", "fine"] and fresh.name == ""


def test_appended_lines_are_redacted(tmp_path: Path):
    path = tmp_path / f"{SESSION}.json"
    redact = lambda text: text.replace("sk-SECRET", "***")  # noqa: E731
    history = [Message.user("hi")]
    log = log_with(path, history, redact)
    snapshot = path.read_bytes()
    history.append(Message.user("my key is sk-SECRET"))
    fields = {**SavedSession(SESSION, history).fields(), "workdir": "/home/sk-SECRET"}
    log.save(path, "", fields, history, {}, redact)
    appended = path.read_bytes()[len(snapshot) :]
    assert appended and b"sk-SECRET" not in appended
    loaded = load_session(SESSION, tmp_path)
    assert loaded.history[-1].content == "my key is ***" and loaded.workdir == "/home/***"


def test_a_listing_reads_the_header_and_the_last_line_only(tmp_path: Path):
    path = tmp_path / f"{SESSION}.json"
    history = [Message.user("first words"), Message.assistant("hello")]
    log = log_with(path, history)
    history += [Message.user("two"), Message.assistant("fine")]
    log.save(path, "", SavedSession(SESSION, history).fields(), history, {}, None)
    header, snapshot, *rest = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(header + b"x" * (len(snapshot) - 1) + b"\n" + b"".join(rest))
    (listed,) = list_sessions(tmp_path)
    assert (listed.messages, listed.first_prompt) == (4, "first words")
    with pytest.raises(SessionError, match="corrupt session file"):
        load_session(SESSION, tmp_path)


def test_a_log_past_twice_its_snapshot_is_rewritten_as_one(tmp_path: Path):
    path = tmp_path / f"{SESSION}.json"
    history = [Message.user("a" * 200)]
    log = log_with(path, history)
    snapshots = set()
    for n in range(60):
        history.append(Message.user(f"{n} " + "b" * 200))
        log.save(path, "", SavedSession(SESSION, history).fields(), history, {}, None)
        header, *_ = path.read_bytes().splitlines()
        snapshot = len(header) + 1 + json.loads(header)["snapshot_bytes"]
        snapshots.add(snapshot)
        assert path.stat().st_size <= REWRITE_FACTOR * snapshot + 400  # one line past, at most
    assert len(snapshots) > 3  # it was rewritten as it grew
    assert load_session(SESSION, tmp_path).history == history


def test_a_newer_format_or_a_malformed_record_is_a_clear_error(tmp_path: Path):
    path = tmp_path / f"{SESSION}.json"
    log_with(path, [Message.user("hi")])
    header, snapshot = path.read_bytes().splitlines(keepends=True)
    newer = json.loads(header) | {"format": 3}
    path.write_bytes(json.dumps(newer).encode() + b"\n" + snapshot)
    with pytest.raises(SessionError, match="session format 3; this ollie_nb reads 2"):
        load_session(SESSION, tmp_path)
    assert list_sessions(tmp_path) == []
    path.write_bytes(header + snapshot + b'{"messages": 2, "set": [1], "add": {"role": "user"}}\n')
    with pytest.raises(SessionError, match=r":3: corrupt session file"):
        load_session(SESSION, tmp_path)


def test_a_listing_finds_a_last_line_longer_than_its_first_read(tmp_path: Path):
    path = tmp_path / f"{SESSION}.json"
    history = [Message.user("hi")]
    log = log_with(path, history)
    history.append(Message.tool("call_1", "x" * 300_000, name="execute_code"))  # > 64 KiB
    log.save(path, "", SavedSession(SESSION, history).fields(), history, {}, None)
    assert list_sessions(tmp_path)[0].messages == 2


def test_a_sub_agents_new_messages_are_appended_not_its_whole_history(tmp_path: Path):
    path = tmp_path / f"{SESSION}.json"
    history, child = [Message.user("hi")], [Message.user("step 1")]
    fields = SavedSession(SESSION, history).fields()
    log = SessionLog()
    log.save(path, "", fields, history, {"worker": child}, None)
    before = path.read_bytes()
    child.append(Message.assistant("step 1 done"))
    log.save(path, "", fields, history, {"worker": child, "late": [Message.user("new")]}, None)
    (line,) = path.read_bytes()[len(before) :].splitlines()
    grown = {n: [m["content"] for m in new] for n, new in json.loads(line)["children"].items()}
    assert grown == {"worker": ["step 1 done"], "late": ["new"]}
    loaded = load_session(SESSION, tmp_path)
    assert loaded.children == {"worker": child, "late": [Message.user("new")]}


@pytest.mark.anyio
async def test_a_secret_known_after_its_line_was_written_is_masked_there_too(
    make_core, monkeypatch
):
    secret = "tok-4f9a8b7c6d5e1a2b3c4d"
    core = await make_core(OfflineBackend(replies), autosave=True)
    await core.submit(f"my token is {secret}")
    path = file_of(core.session.session_id)
    assert secret.encode() in path.read_bytes()  # not known as a secret yet
    monkeypatch.setenv("BILLING_API_KEY", secret)
    core.redact.refresh()
    await core.submit("two")
    assert secret.encode() not in path.read_bytes()
    assert load_session(core.session.session_id).history[-2].content == "two"
