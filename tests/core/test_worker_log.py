"""The worker's log escapes terminal control characters of the store's text (issue 34: an OSC 52
sequence in a step title wrote the reader's clipboard)."""

from __future__ import annotations

import pytest

from ollie_nb.core._events import WatchNotice, WatchWhat
from ollie_nb.core._terminal import terminal_safe
from ollie_nb.core._worker import Worker, WorkOptions
from tests.conftest import MakeCore

CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: set the clipboard to "rm -rf ~"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (CLIPBOARD, "\\x1b]52;c;cm0gLXJmIH4=\\x07"),
        ("a\tb\nc", "a\tb\nc"),  # tab and newline stay
        ("\r\x00\x7f\x9b\x85", "\\x0d\\x00\\x7f\\x9b\\x85"),  # CR, NUL, DEL, C1 CSI and NEL
        ("café ✓ \xa0", "café ✓ \xa0"),  # printable text past C1 is left alone
    ],
)
def test_terminal_safe_shows_control_characters_as_escapes(text, shown):
    assert terminal_safe(text) == shown


@pytest.mark.anyio
async def test_a_step_title_with_an_escape_sequence_is_logged_escaped(make_core: MakeCore):
    lines: list[str] = []
    core = await make_core(name="w1", start=False)
    worker = Worker(core, WorkOptions("tasks", name="w1"), lines.append)
    title = f"Tidy{CLIPBOARD} the flat\x9b2J"
    worker._notice(WatchNotice(f"step 1 (t1): {title}", WatchWhat.CLAIMED))
    assert lines == ["claimed: step 1 (t1): Tidy\\x1b]52;c;cm0gLXJmIH4=\\x07 the flat\\x9b2J"]
    assert not any(ch in lines[0] for ch in "\x1b\x07\x9b")
