"""A tutorial re-saved with other line endings (as JupyterLab saves one) still passes nbval."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TUTORIAL = "03-task-server.ipynb"


def _resave(source: Path, target: Path) -> int:
    """Save `source` as `target` with every saved stream output's line endings swapped:
    the shell commands' `\\r\\n` become `\\n` (what JupyterLab writes back), and the
    Python prints' `\\n` become `\\r\\n`. Returns how many outputs changed."""
    nb = nbformat.read(source, as_version=4)
    changed = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") != "stream":
                continue
            text = output["text"]
            if "\r\n" in text:
                output["text"] = text.replace("\r\n", "\n")
            else:
                output["text"] = text.replace("\n", "\r\n")
            changed += output["text"] != text
    nbformat.write(nb, target)
    return changed


@pytest.mark.timeout(600)
def test_tutorial_03_saved_with_other_line_endings_passes_nbval(tmp_path: Path) -> None:
    copy = tmp_path / "notebooks"
    copy.mkdir()
    for name in ("conftest.py", "sanitize.cfg"):
        shutil.copy(NOTEBOOKS / name, copy / name)
    assert _resave(NOTEBOOKS / TUTORIAL, copy / TUTORIAL) >= 3
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --nbval --nbval-current-env -p no:cacheprovider\ntimeout = 300\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", f"notebooks/{TUTORIAL}"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
