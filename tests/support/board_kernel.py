"""A real kernel with ollie_nb loaded and ollie-tasks wired, for the board's kernel tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.agents import kernel_env, tasks_agent_file
from tests.support.kernel_harness import Kernel

VIEW = (
    "import gc\nfrom ollie_nb.notebook._board_widget import BoardView\n"
    "v = [o for o in gc.get_objects() if isinstance(o, BoardView)][-1]\n"
)
"""Cell code that finds the newest board as `v` (its widget: `v.widget`)."""


@contextmanager
def board_kernel(base: Path) -> Iterator[Kernel]:
    """A kernel in `base` with ollie_nb loaded and an agent on ollie-tasks at base/tasks.db."""
    k = Kernel(str(base), kernel_env(base))
    try:
        assert k.run("%load_ext ollie_nb").error is None
        assert k.run(f"%ollie agent {tasks_agent_file(base)}").error is None
        yield k
    finally:
        k.shutdown()


def board_html(k: Kernel) -> str:
    """The newest board's HTML as the kernel holds it now."""
    return k.run(VIEW + "print(v.widget.html)").text()


def wait_html(condition: str) -> str:
    """Cell code that waits (up to 20 s) until `condition`, an expression over `html` (the
    newest board's), holds, then prints that HTML."""
    return VIEW + (
        "import asyncio\n"
        "for _ in range(400):\n"
        "    html = v.widget.html\n"
        f"    if {condition}:\n"
        "        break\n"
        "    await asyncio.sleep(0.05)\n"
        "print(v.widget.html)"
    )
