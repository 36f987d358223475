"""Every package's `__all__` names what it holds: `from ollie_nb.<package> import *` works."""

from __future__ import annotations

import importlib

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
    """A name listed in `__all__` but not imported breaks `import *` with AttributeError."""
    names: dict[str, object] = {}
    exec(f"from {package} import *", names)  # the import a user types
    module = importlib.import_module(package)
    public = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
    assert set(public) <= set(names)
