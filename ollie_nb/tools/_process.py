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


async def read_bounded(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, bool]:
    """Read `stream` to its end or to `limit` bytes; (what was read, whether the limit was hit).

    Past the limit nothing more is read, so a flood of output cannot grow memory.
    """
    data = bytearray()
    while len(data) <= limit:
        chunk = await stream.read(min(65536, limit + 1 - len(data)))
        if not chunk:
            return bytes(data), False
        data += chunk
    return bytes(data[:limit]), True
