"""Subprocess lifetime: children run in their own session so a kill takes the whole group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group `proc` leads (its grandchildren too), ignoring the already-gone."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
