"""Fixtures of the task server tests: a SQLite path, a PostgreSQL cluster, both backends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.pg_cluster import PgCluster, find_bin_dir, start_cluster

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Run the async tests on asyncio, the loop the rest of ollie_nb uses."""
    return "asyncio"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database path in a directory that does not exist yet (the server must create it)."""
    return tmp_path / "project" / ".ollie" / "tasks.db"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One throwaway PostgreSQL cluster for the session (skipped only off CI without binaries)."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        reason = "PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason + "; CI must run the PostgreSQL tests")
        pytest.skip(reason)
    cluster = start_cluster(bin_dir)
    try:
        yield cluster
    finally:
        cluster.stop()


def new_target(backend: str, request: pytest.FixtureRequest, folder: Path) -> str | Path:
    """A fresh, empty database of `backend`: a SQLite path, or a PostgreSQL URL."""
    if backend == "postgresql":
        return request.getfixturevalue("pg_cluster").new_database()
    return folder / "project" / ".ollie" / "tasks.db"


@pytest.fixture(params=BACKENDS)
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """A fresh database on each backend in turn: the shared suite runs against both."""
    return new_target(request.param, request, tmp_path)


@pytest.fixture(params=BACKENDS, scope="module")
def module_db(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> str | Path:
    """One database per module and backend, for tests sharing one server process."""
    return new_target(request.param, request, tmp_path_factory.mktemp("db"))
