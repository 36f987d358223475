"""A worker whose task server cannot be reached says which server, where and why, in one line,
and exits 1 without a traceback (real `python -m ollie_nb work` processes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.core.test_workers import start_worker
from tests.tools.test_mcp_auth import _free_port, _serving

pytestmark = pytest.mark.slow


def run_worker(tmp: Path, server: dict) -> subprocess.CompletedProcess[str]:
    agent = tmp / "badurl.json"
    agent.write_text(json.dumps({"mcpServers": {"tasks": {**server, "connectTimeout": 20}}}))
    proc = start_worker(tmp, agent, "w1", "--until-idle")
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_refused_url_names_the_server_and_says_it_was_refused(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    run = run_worker(tmp_path, {"url": url})
    assert run.returncode == 1, run
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [
        f"ollie-work: the agent {str(tmp_path / 'badurl.json')!r} has no task server: MCP server tasks ({url}): "
        "connection refused: nothing listens at that host and port; check that the server runs "
        "and that the URL's host and port are right"
    ]


def test_a_wrong_token_names_the_server_and_the_401(tmp_path):
    with _serving(tmp_path / "tasks.db", "the-right-token", _free_port()) as url:
        run = run_worker(tmp_path, {"url": url, "headers": {"Authorization": "Bearer nope-token"}})
    assert run.returncode == 1, run
    assert "Traceback" not in run.stderr and "nope-token" not in run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(
        f"ollie-work: the agent {str(tmp_path / 'badurl.json')!r} has no task server: MCP server tasks ({url}): "
        "the server refused the credentials (HTTP 401: missing or wrong bearer token); "
    ), line
