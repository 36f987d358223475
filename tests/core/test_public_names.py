"""`from ollie_nb.core import *` gives every name the package lists as public."""

from __future__ import annotations

import ollie_nb.core


def test_the_star_import_of_the_core_gives_every_listed_name():
    names: dict[str, object] = {}
    exec("from ollie_nb.core import *", names)  # the import a user types
    assert set(ollie_nb.core.__all__) <= set(names)
    assert names["UsageTotals"] is ollie_nb.core.UsageTotals
