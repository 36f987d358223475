"""Session files stay private and inside the sessions dir, whatever a session's id says."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ollie_nb.core import SessionError, _sessions
from ollie_nb.core._sessions import SavedSession, list_sessions, load_session, save_session
from ollie_nb.llm import Message


def data(session_id: str) -> SavedSession:
    return SavedSession(session_id, [Message.user("hi")])


@pytest.mark.parametrize(
    "bad", ["../../victim/config", "/etc/passwd", "a/b", "x/../../victim", ".hidden", "*", ""]
)
def test_an_id_that_leaves_the_dir_is_refused_on_save(tmp_path: Path, bad: str):
    sessions = tmp_path / "sessions"
    with pytest.raises(SessionError, match="invalid session id"):
        save_session(data(bad), sessions)
    assert not (tmp_path / "victim").exists()
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("bad", ["../../victim/config", "x/../../victim", "ok-id/../x", "a b"])
def test_a_session_file_whose_id_points_outside_is_refused_on_load(tmp_path: Path, bad: str):
    sessions = tmp_path / "sessions"
    save_session(data("20261201-000000-abcd"), sessions)
    file = sessions / "20261201-000000-abcd.json"
    header, *rest = file.read_text().splitlines(keepends=True)
    content = json.loads(header)
    content["id"] = bad  # a valid first character does not make the id valid
    file.write_text(json.dumps(content) + "\n" + "".join(rest))
    with pytest.raises(SessionError, match="invalid session id"):
        load_session("20261201-000000-abcd", sessions)
    assert list_sessions(sessions) == []  # skipped as unreadable, never followed


def test_the_lookup_key_is_not_a_glob(tmp_path: Path):
    sessions = tmp_path / "sessions"
    save_session(data("20261201-000000-abcd"), sessions)
    with pytest.raises(SessionError, match="no saved session"):
        load_session("*", sessions)
    with pytest.raises(SessionError, match="no saved session"):
        load_session("2026*", sessions)
    assert load_session("20261201", sessions).id == "20261201-000000-abcd"  # a prefix still works


def test_files_are_never_readable_by_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The mode is checked the moment the file is created, with a permissive umask."""
    created: list[int] = []
    real_open = os.open

    def watching_open(path, flags, mode=0o777, *args, **kwargs):
        fd = real_open(path, flags, mode, *args, **kwargs)
        if flags & os.O_CREAT:
            created.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return fd

    monkeypatch.setattr(_sessions.os, "open", watching_open)
    old = os.umask(0)
    try:
        path = save_session(data("20261201-000000-abcd"), tmp_path / "private" / "sessions")
    finally:
        os.umask(old)
    assert created and all(mode & 0o077 == 0 for mode in created), [oct(m) for m in created]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
