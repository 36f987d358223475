"""Text from the store or a server made safe for a terminal line (docs/TASK_SERVER_SECURITY.md).

A title or note holding ESC or BEL would drive the reader's terminal (an OSC 52 sequence
writes its clipboard). Every C0 control but tab and newline, DEL and every C1 control is
shown as a visible escape (`\\x1b`, `\\x7f`, `\\x9b`) instead.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` with its terminal control characters written as visible `\\xNN` escapes."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found[0]):02x}", text)
