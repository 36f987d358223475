"""docs/MAGICS.md has a row for every word `%ollie help` lists after `plan` (show, retry...)."""

from __future__ import annotations

import re

from ollie_nb.notebook.commands._registry import COMMANDS
from tests.meta.test_magics_doc import DOC


def test_every_word_after_plan_in_the_help_has_its_row_in_the_table():
    rows = set(re.findall(r"^\| `plan ([a-z]+)\b", DOC.read_text(encoding="utf-8"), re.M))
    words = [w for w in COMMANDS.get("plan").words if not w.startswith("-")]
    assert "retry" in words
    missing = [w for w in words if w not in rows]
    assert not missing, f"docs/MAGICS.md lacks rows for: plan {', plan '.join(missing)}"
