"""Subprocess lifetime: children run in their own session so a kill takes the whole group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group `proc` leads (its grandchildren too), ignoring the already-gone."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def start_group(start: Awaitable[asyncio.subprocess.Process]) -> asyncio.subprocess.Process:
    """Await the start of a process that leads its own session; cancelled while it starts,
    its whole group is killed once the start completes.

    asyncio's own clean-up of a start cancelled before its pipes connect kills only the
    leader, so a command the shell had already forked (a `sleep`) would outlive Ctrl-C.
    """
    starting = asyncio.ensure_future(start)
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(_kill_started)
        raise


def _kill_started(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not starting.cancelled() and starting.exception() is None:
        kill_group(starting.result())


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
