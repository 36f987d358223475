"""The cell's output for a foreground turn: show an object, or show one and replace it in place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from IPython import get_ipython
from IPython.display import display

from ollie_nb.notebook._display import Live, Thinking


def show(obj: Any) -> None:
    """Append `obj` to the cell's output (a terminal prints a thinking element as a dim line)."""
    if isinstance(obj, Thinking) and _text_only():
        print(obj.terminal_line())
        return
    display(obj)


def live_display(obj: Any) -> Callable[[Any], None]:
    """Show `obj` and return a function that replaces it in place.

    A terminal (IPython's own, not a kernel) cannot replace an output: every update would
    print again, and a half-streamed line would stay. There the streaming area is not
    shown at all (the finished reply is, as its own output) and other objects once.
    """
    if _text_only():
        if not isinstance(obj, Live):
            display(obj)
        return _ignore
    handle = display(obj, display_id=True)
    return handle.update


def _text_only() -> bool:
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "TerminalInteractiveShell"


def _ignore(obj: Any) -> None:
    return None
