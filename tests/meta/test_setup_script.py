"""scripts/setup.sh waits for another apt-get's lock instead of failing at once: its
`wait_for_lock`, run against a temp file this test holds as apt-get holds its locks (fcntl)."""

from __future__ import annotations

import fcntl
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SETUP = Path(__file__).resolve().parents[2] / "scripts" / "setup.sh"


def wait_for_lock(file: Path, limit: int) -> subprocess.Popen[str]:
    script = f'source "{SETUP}"; wait_for_lock "$1" {limit}'
    return subprocess.Popen(
        ["bash", "-c", script, "setup", str(file)], stderr=subprocess.PIPE, text=True
    )


def test_a_free_lock_is_taken_at_once_without_a_word(tmp_path):
    lock = tmp_path / "lock-frontend"
    lock.touch()
    proc = wait_for_lock(lock, 5)
    assert proc.wait(30) == 0 and proc.stderr.read() == ""


def test_a_held_lock_is_waited_for_and_the_wait_says_so(tmp_path):
    lock = tmp_path / "lock-frontend"
    with open(lock, "a") as held:
        fcntl.lockf(held, fcntl.LOCK_EX)
        proc = wait_for_lock(lock, 60)
        line = proc.stderr.readline()  # said once it found the lock held
        assert line == f"setup: another apt-get or dpkg holds {lock}; waiting up to 60 s\n"
        assert proc.poll() is None
    assert proc.wait(30) == 0  # the lock is free: the wait ends


def test_a_lock_held_past_the_limit_says_what_to_do_and_fails(tmp_path):
    lock = tmp_path / "lock-frontend"
    with open(lock, "a") as held:
        fcntl.lockf(held, fcntl.LOCK_EX)
        proc = wait_for_lock(lock, 1)
        assert proc.wait(30) == 1
    said = proc.stderr.read()
    assert said.endswith(
        f"setup: {lock} is still held after 1 s: let the other apt-get or dpkg finish "
        f"(see which: fuser -v {lock}), then run scripts/setup.sh again\n"
    ), said
