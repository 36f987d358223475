"""A throwaway PostgreSQL cluster for the tests: initdb + pg_ctl on a temp dir, loopback only.

PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` system user.
Authentication is `trust`, on 127.0.0.1 and a private socket directory only.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import psycopg


def find_bin_dir() -> Path | None:
    """The directory of initdb and pg_ctl: on PATH, or Debian's /usr/lib/postgresql/N/bin."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(versions[0]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class PgCluster:
    """A running cluster; `new_database()` hands each test a fresh, empty store location."""

    bin_dir: Path
    root: Path
    port: int = field(default_factory=_free_port)
    _count: int = 0

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _as_owner(self, *argv: str) -> list[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return [*prefix, *argv]

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(
            self._as_owner(
                str(self.bin_dir / "initdb"), "-D", str(self.data), "-A", "trust",
                "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C",
            ),
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
            "-c fsync=off -c full_page_writes=off -c max_connections=200"
        )
        subprocess.run(
            self._as_owner(
                str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-o", options,
                "-l", str(self.root / "log"), "-w", "-t", "60", "start",
            ),
            check=True, capture_output=True, timeout=90,
        )  # fmt: skip
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE tasks")

    def stop(self) -> None:
        subprocess.run(
            self._as_owner(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"),
            capture_output=True, timeout=60,
        )  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres", password: str = "") -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://postgres{secret}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """An empty place for a task store, as a URL: a schema of its own in database `tasks`.

        A schema (chosen through the URL's search_path) rather than a database: CREATE
        DATABASE copies a template and takes a third of a second here, CREATE SCHEMA a
        millisecond. The stores cannot tell the difference.
        """
        self._count += 1
        name = f"s{os.getpid()}_{self._count}"
        with psycopg.connect(self.url("tasks"), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return self.url("tasks") + f"?options=-c%20search_path%3D{name}"


def start_cluster(bin_dir: Path) -> PgCluster:
    """Start a cluster in a fresh temporary directory."""
    cluster = PgCluster(bin_dir, Path(tempfile.mkdtemp(prefix="ollie-pg-")))
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster
