"""Bounded waits: every wait in the tests has its own limit and says what it waited for."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Callable


async def until(check: Callable[[], object], timeout: float = 20.0, what: str = "") -> None:
    """Wait (bounded) on the running loop until `check()` holds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what or 'the condition'} not reached within {timeout} s")
        await asyncio.sleep(0.02)


def wait_until(
    check: Callable[[], object], timeout: float = 20.0, what: str = "", interval: float = 0.05
) -> None:
    """Wait (bounded, blocking this thread) until `check()` holds: for code with no loop of
    its own to await on (a thread's, a subprocess's, a fixture's)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what or 'the condition'} not reached within {timeout} s")
        time.sleep(interval)


def listening(port: int, proc: subprocess.Popen) -> bool:
    """Whether a server process accepts connections on 127.0.0.1:`port` (an exited one fails)."""
    assert proc.poll() is None, f"the server exited ({proc.returncode})"
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True
