"""docs/MAGICS.md's command table lists every command `%ollie help` lists, with its options."""

from __future__ import annotations

import re
from pathlib import Path

import ollie_nb.notebook._magics  # noqa: F401  (registers the commands)
from ollie_nb.notebook.commands._registry import COMMANDS

DOC = Path(__file__).resolve().parents[2] / "docs" / "MAGICS.md"


def table_rows() -> dict[str, str]:
    """The command table's syntax cells by command name (`run` has two rows: joined)."""
    rows: dict[str, str] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        found = re.match(r"\| `([a-z]+)\b([^`]*)` \|(.*)\|$", line)
        if found:
            rows[found.group(1)] = rows.get(found.group(1), "") + " " + found.group(2)
    return rows


def test_every_command_of_the_help_is_in_the_table_with_its_options():
    rows = table_rows()
    missing = [name for name in COMMANDS.names if name not in rows]
    assert not missing, f"docs/MAGICS.md's command table lacks: {', '.join(missing)}"
    for name in COMMANDS.names:
        for option in re.findall(r"--[a-z-]+", COMMANDS.get(name).usage):
            assert option in rows[name], f"docs/MAGICS.md's row of {name} lacks {option}"
