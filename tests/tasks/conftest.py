"""Fixtures of the task server tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Run the async tests on asyncio, the loop the rest of ollie_nb uses."""
    return "asyncio"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database path in a directory that does not exist yet (the server must create it)."""
    return tmp_path / "project" / ".ollie" / "tasks.db"
