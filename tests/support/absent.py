"""What a test does when something it needs is missing: skip on a developer's machine, fail in CI."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """True when the suite runs in CI (CI=true), where everything must be tested."""
    return os.environ.get("CI") == "true"


def skip_or_fail(reason: str, *, allow_module_level: bool = False) -> NoReturn:
    """Skip with `reason`, or fail with it when CI=true (CI must not skip a test)."""
    if in_ci():
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=allow_module_level)
