"""Clients of the 2025 protocol subscribe to tasks://events: the official SDK 1.x in a venv
of its own (made once per machine and cached in the temp dir), against ollie-tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agents import FIXTURES
from tests.support.tasks_harness import connect, ok

HERE = Path(__file__).parent
SDK1 = "mcp>=1.9,<2"
VENV = Path(tempfile.gettempdir()) / "ollie-nb-tests-mcp1-venv"


@pytest.fixture(scope="session")
def mcp1_python() -> Iterator[Path]:
    """The python of a venv holding the MCP SDK 1.x (installed from PyPI the first time)."""
    python = VENV / "bin" / "python"
    ready = VENV / ".installed"
    if not ready.exists():
        try:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True,
                           capture_output=True, timeout=300)  # fmt: skip
            subprocess.run([str(python), "-m", "pip", "install", "-q", SDK1], check=True,
                           capture_output=True, timeout=600)  # fmt: skip
        except (subprocess.SubprocessError, OSError) as exc:
            reason = f"could not install {SDK1} into {VENV}: {exc}"
            if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
                pytest.fail(reason)
            pytest.skip(reason)
        ready.write_text(SDK1 + "\n")
    yield python


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_sdk1_client_subscribes_and_sees_a_change_made_by_another_process(
    mcp1_python: Path, tmp_path: Path
) -> None:
    db = tmp_path / "tasks.db"
    proc = subprocess.Popen(
        [str(mcp1_python), str(FIXTURES / "mcp1_subscriber.py"), sys.executable, str(db)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        facts = json.loads(proc.stdout.readline() or "null")
        assert proc.stdout.readline() == "subscribed\n"
        async with connect(db) as writer:  # another server process on the same file
            await ok(writer, "task_create", title="Made by another process")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    assert facts["protocol"].startswith("2025") and facts["subscribe"] is True
    assert facts["name"] == "ollie-tasks" and facts["version"]
    assert facts["prompts"] == ["plan", "work-ready-steps"]
    assert out.splitlines() == ["updated tasks://events", "quiet"]


@pytest.mark.slow
@pytest.mark.anyio
async def test_server_info_has_the_package_version_and_the_prompts_are_workflows(
    tmp_path: Path,
) -> None:
    from importlib.metadata import version

    async with connect(tmp_path / "tasks.db") as client:
        info = client.server_info
        plan = await client.get_prompt("plan", {"goal": "Ship the report"})
        work = await client.get_prompt("work-ready-steps", {"goal": "t-abcde"})
    assert info is not None and info.version == version("ollie-nb")
    (message,) = plan.messages
    assert message.content.text.startswith("Plan this goal as tasks: Ship the report")
    assert "task_create" in message.content.text
    text = work.messages[0].content.text
    assert "task_list(parent='t-abcde', status='ready')" in text and "task_claim" in text
