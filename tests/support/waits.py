"""Bounded waits: every wait in the tests has its own limit and says what it waited for."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any


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


def output_until(
    kernel: Any, code: str, wanted: Callable[[str], bool] | str, timeout: float = 30.0
) -> str:
    """Run `code` in `kernel` (short cells: its loop runs between them) until its output holds
    `wanted` (a predicate, or text it contains); return that output."""
    holds = wanted if callable(wanted) else lambda text: wanted in text
    last = [""]

    def shows() -> bool:
        last[0] = kernel.run(code).text()
        return bool(holds(last[0]))

    try:
        wait_until(shows, timeout, f"the output of {code!r} as wanted", interval=0.1)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; it was {last[0]!r}") from None
    return last[0]
