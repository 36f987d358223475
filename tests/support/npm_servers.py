"""Third-party MCP servers from npm, installed once into a cache directory and reused."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support.absent import skip_or_fail

EVERYTHING = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"  # the release the interop table in docs/INTEROP.md reports


def npm_cache() -> Path:
    """Where npm packages for tests live: $OLLIE_TEST_NPM_DIR, else ~/.cache/ollie-nb-tests."""
    given = os.environ.get("OLLIE_TEST_NPM_DIR")
    return Path(given) if given else Path.home() / ".cache" / "ollie-nb-tests" / "npm"


def server_everything() -> list[str]:
    """The command line of server-everything over stdio, installing it on first use.

    Skips (fails in CI) when node or npm is missing; an install that fails is a failure.
    """
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        skip_or_fail("node and npm are needed to install and run " + EVERYTHING)
    home = npm_cache() / f"server-everything-{EVERYTHING_VERSION}"
    entry = home / "node_modules" / EVERYTHING / "dist" / "index.js"
    if not entry.exists():
        staging = home.with_name(f"{home.name}.{os.getpid()}")
        staging.parent.mkdir(parents=True, exist_ok=True)
        spec = f"{EVERYTHING}@{EVERYTHING_VERSION}"
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(staging), spec],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"npm install {spec} failed:\n{done.stderr[-2000:]}"
        try:
            staging.rename(home)  # atomic; a concurrent run that got there first wins
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
    return [node, str(entry), "stdio"]
