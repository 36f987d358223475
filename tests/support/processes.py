"""Looking at live processes (Linux /proc): is a process group gone, which children run."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable
from pathlib import Path

from tests.support.waits import wait_until


def _stat(pid: str) -> tuple[str, str, int, int] | None:
    """(name, state, ppid, pgrp) of a process, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    state, ppid, pgrp = stat[stat.rindex(")") + 1 :].split()[:3]
    return name, state, int(ppid), int(pgrp)


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in process group `pgid`."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = _stat(entry)
            if info and info[1] != "Z" and info[3] == pgid:
                members.append(int(entry))
    return members


def wait_group_gone(pgid: int, within: float = 10.0) -> list[int]:
    """Poll (bounded) until group `pgid` has no live process; return what is left, if any."""
    left = group_members(pgid)

    def gone() -> bool:
        left[:] = group_members(pgid)
        return not left

    with contextlib.suppress(AssertionError):  # what is left is the answer, not a failure
        wait_until(gone, within, f"process group {pgid} gone")
    return left


def children_named(name: str, parent: int | None = None) -> list[int]:
    """Live children of `parent` (default: this process) whose command name is `name`."""
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = _stat(entry)
            if info and info[0] == name and info[2] == parent and info[1] != "Z":
                found.append(int(entry))
    return found


async def cancel_mid_start(call: Awaitable[object], shell: str, pid_file: Path) -> int:
    """Start `call` (which runs a `shell` command that forks a child, then writes its own
    pid, its process group, to `pid_file`) and cancel it on the loop turn that forked the
    shell, before its pipes connect: what Ctrl-C meets on a busy loop. Assert the call
    ended at once; return the group, once gone or after 10 s, for the caller to check."""
    task = asyncio.ensure_future(call)
    for _ in range(100):
        await asyncio.sleep(0)
        if children_named(shell):
            break
    deadline = time.monotonic() + 10
    while not (pid_file.exists() and pid_file.read_text().strip()):  # the loop stays blocked
        assert time.monotonic() < deadline, f"{pid_file} never written"
        time.sleep(0.01)
    task.cancel()
    await asyncio.wait({task}, timeout=10)
    assert task.cancelled(), "the cancelled call did not end at once"
    pgid = int(pid_file.read_text())
    for _ in range(200):  # the loop runs on meanwhile: the start completes, the group is killed
        if not group_members(pgid):
            break
        await asyncio.sleep(0.05)
    return pgid
