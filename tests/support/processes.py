"""Looking at live processes (Linux /proc): is a process group gone, which children run."""

from __future__ import annotations

import contextlib
import os
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
