"""The real `ollie_nb.tasks` server as the suite runs it: its config, its process, its database."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.waits import wait_until


def task_server(db: Path, *, timeout: float = 10.0, name: str = "tasks") -> dict[str, Any]:
    """An `mcpServers` entry starting `python -m ollie_nb.tasks serve --db DB` over stdio."""
    return {
        name: {
            "command": sys.executable,
            "args": ["-m", "ollie_nb.tasks", "serve", "--db", str(db), "--watch-interval", "0"],
            "timeout": timeout,
            "env": {"PYTHONPATH": str(Path(__file__).resolve().parents[2])},  # this tree's
        }
    }


def server_pids(db: Path) -> list[int]:
    """Pids of the live task server processes serving `db`, found through /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and b"ollie_nb.tasks" in argv and os.fsencode(str(db)) in argv:
            pids.append(int(entry))
    return pids


def the_server_pid(db: Path) -> int:
    """The one server process of `db` (fails the test if there is not exactly one)."""
    pids = server_pids(db)
    assert len(pids) == 1, f"expected one task server on {db}, found {pids}"
    return pids[0]


def kill(pid: int) -> None:
    """SIGKILL `pid` and wait until it is gone (a zombie counts as gone)."""
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: _gone(pid), 5, f"process {pid} gone after SIGKILL", interval=0.005)


def _gone(pid: int) -> bool:
    """Whether `pid` no longer runs (no such process, or a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


@dataclass(frozen=True)
class Snapshot:
    """What the task database holds, read straight from SQLite (no server in between)."""

    tasks: dict[str, tuple[str, str, str]]  # id -> (title, parent, status)
    deps: set[tuple[str, str]]  # (task, blocker)

    def children(self, parent: str) -> dict[str, str]:
        """title -> id of the direct children of `parent`."""
        return {title: i for i, (title, p, _) in self.tasks.items() if p == parent}


def count_tasks(db: Path) -> int:
    """How many tasks the database holds now (0 before the server created it)."""
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT count(*) FROM tasks").fetchone()[0]
    except sqlite3.OperationalError:  # schema not there yet
        return 0
    finally:
        conn.close()


def snapshot(db: Path) -> Snapshot:
    """Every task and dependency edge in the database."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        tasks = {
            row[0]: (row[1], row[2] or "", row[3])
            for row in conn.execute("SELECT id, title, parent, status FROM tasks")
        }
        deps = set(conn.execute("SELECT task, blocker FROM deps").fetchall())
    finally:
        conn.close()
    return Snapshot(tasks, deps)
