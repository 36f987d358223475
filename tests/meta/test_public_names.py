"""Every package's `__all__` names what it holds: `from ollie_nb.<package> import *` works."""

from __future__ import annotations

import subprocess
import sys

import pytest

PACKAGES = [
    "ollie_nb.core",
    "ollie_nb.llm",
    "ollie_nb.tools",
    "ollie_nb.planning",
    "ollie_nb.notebook",
    "ollie_nb.redaction",
    "ollie_nb.errors",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_a_star_import_finds_every_public_name(package: str) -> None:
    """A name listed in `__all__` but not imported breaks `import *` with AttributeError;
    run in a process of its own, as a user's script would."""
    run = subprocess.run(
        [sys.executable, "-c", f"from {package} import *"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
