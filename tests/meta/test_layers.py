"""The package's layers hold: import-linter's contracts in pyproject.toml are kept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_import_contracts_are_kept() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "lint-imports is part of the dev extras: pip install -e '.[dev]'"
    done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Contracts: 6 kept, 0 broken." in done.stdout


@pytest.mark.slow
def test_a_broken_layer_is_caught(tmp_path: Path) -> None:
    """The contract can fail: a planning module that imports the core breaks it."""
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint
    copy = tmp_path / "ollie_nb"
    shutil.copytree(ROOT / "ollie_nb", copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    bad = copy / "planning" / "_steps.py"
    bad.write_text(bad.read_text() + "\nfrom ollie_nb.core import AgentCore  # noqa\n")
    done = subprocess.run(
        [lint],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode != 0
    assert "ollie_nb.planning._steps -> ollie_nb.core" in done.stdout


@pytest.mark.slow
def test_a_cycle_in_the_notebook_package_is_caught(tmp_path: Path) -> None:
    """The notebook's inner layers can fail: a display module that imports the magics breaks them."""
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint
    copy = tmp_path / "ollie_nb"
    shutil.copytree(ROOT / "ollie_nb", copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    bad = copy / "notebook" / "_widgets.py"
    bad.write_text(
        bad.read_text() + "\nfrom ollie_nb.notebook._magics import OllieMagics  # noqa\n"
    )
    done = subprocess.run(
        [lint],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode != 0
    assert "ollie_nb.notebook._widgets -> ollie_nb.notebook._magics" in done.stdout
