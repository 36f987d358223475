"""Secrets stay out of the process list: the token and a database password come from the
environment or a file, and one given as an argument is warned about in one line."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support.tasks_harness import PYTHON_M, cli
from tests.support.waits import listening, wait_until

DB_URL = "postgresql://app:s3cret-pw@127.0.0.1:1/tasks"  # nothing listens on port 1


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OLLIE_TASKS_")}
    return {**env, **extra}


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "WARNING" in line]


@pytest.mark.slow
def test_a_password_in_db_on_the_command_line_is_warned_about_and_never_printed() -> None:
    run = cli(DB_URL, "list", env=_env())
    assert run.returncode == 1  # nothing to connect to
    (warning,) = _warnings(run.stderr)
    assert warning == (
        "ollie-tasks: WARNING: the password in --db (use $OLLIE_TASKS_DB): arguments are "
        "visible to every local user in the process list"
    )
    assert "s3cret-pw" not in run.stderr + run.stdout


@pytest.mark.slow
def test_the_database_url_from_the_environment_gives_no_warning() -> None:
    run = cli(None, "list", env=_env(OLLIE_TASKS_DB=DB_URL))
    assert run.returncode == 1 and "127.0.0.1" in run.stderr  # it was the database tried
    assert _warnings(run.stderr) == [] and "s3cret-pw" not in run.stderr


@pytest.mark.slow
def test_a_url_without_password_and_a_file_path_give_no_warning(tmp_path: Path) -> None:
    assert _warnings(cli("postgresql://app@127.0.0.1:1/tasks", "list", env=_env()).stderr) == []
    assert _warnings(cli(tmp_path / "t.db", "list", env=_env()).stderr) == []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve_http(db: Path, *args: str, env: dict[str, str]) -> tuple[int, str]:
    """Start `serve --http ARGS`, send one request with token `tok-file-1`, stop it;
    return that request's status and the server's stderr."""
    port = _free_port()
    proc = subprocess.Popen(
        [*PYTHON_M, "serve", "--db", str(db), "--http", "--port", str(port), *args],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        wait_until(lambda: listening(port, proc), 30, "the server listening")
        status = httpx.get(
            f"http://127.0.0.1:{port}/mcp", headers={"Authorization": "Bearer tok-file-1"}
        ).status_code
    finally:
        proc.terminate()
        proc.wait(10)
    assert proc.stderr is not None
    return status, proc.stderr.read()


@pytest.mark.slow
def test_the_token_comes_from_a_file_without_warning(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("tok-file-1\n")
    status, stderr = _serve_http(tmp_path / "t.db", "--token-file", str(token_file), env=_env())
    assert status != 401  # the file's token is the one required
    assert _warnings(stderr) == [] and "tok-file-1" not in stderr


@pytest.mark.slow
def test_a_token_on_the_command_line_is_warned_about(tmp_path: Path) -> None:
    status, stderr = _serve_http(tmp_path / "t.db", "--token", "other-tok", env=_env())
    assert status == 401
    assert _warnings(stderr) == [
        "ollie-tasks: WARNING: --token (use $OLLIE_TASKS_TOKEN or --token-file): arguments "
        "are visible to every local user in the process list"
    ]
    assert "other-tok" not in stderr


@pytest.mark.slow
def test_the_token_from_the_environment_is_required_without_warning(tmp_path: Path) -> None:
    status, stderr = _serve_http(tmp_path / "t.db", env=_env(OLLIE_TASKS_TOKEN="tok-file-1"))
    assert status != 401 and _warnings(stderr) == []


@pytest.mark.slow
@pytest.mark.parametrize(("content", "error"), [(None, "cannot read"), ("\n", "is empty")])
def test_a_bad_token_file_is_one_clear_line(
    tmp_path: Path, content: str | None, error: str
) -> None:
    token_file = tmp_path / "token"
    if content is not None:
        token_file.write_text(content)
    run = subprocess.run(
        [*PYTHON_M, "serve", "--db", str(tmp_path / "t.db"), "--http", "--token-file",
         str(token_file)],
        capture_output=True, text=True, timeout=60, env=_env(), stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert run.returncode == 1
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"ollie-tasks: error: {error}") or (
        line.startswith("ollie-tasks: error: --token-file") and error in line
    )
