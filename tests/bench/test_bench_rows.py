"""The bench cannot rot: every row runs in smoke mode, and its number is the row table's.

Each row runs as `python -m bench --smoke --only KEY` in a process of its own, bounded by a
timeout, so a row that crashes or hangs fails its own test. The docs' table of rows is
checked against bench/_rows.py, the one place a row's number comes from.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench._rows import ROWS, number
from bench._run import Mode, Row, Settings
from tests.support.absent import skip_or_fail
from tests.support.pg_cluster import find_bin_dir

ROOT = Path(__file__).resolve().parents[2]
PERFORMANCE = ROOT / "docs" / "PERFORMANCE.md"
SMOKE_TIMEOUT = 240.0  # s for one row at tiny sizes; rows take 1-45 s on a busy 2-core machine
_TABLE_LINE = re.compile(r"^\| (\d+) \| `([^`]+)` \| (.+?) \|$")


def _run_smoke(row: Row, out: Path) -> subprocess.CompletedProcess[str]:
    """Run one row in smoke mode; on a timeout kill its whole process group and fail."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    argv = [sys.executable, "-m", "bench", "--smoke", "--only", row.key, "--json", str(out)]
    with subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=SMOKE_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            pytest.fail(f"row {row.key} did not finish in {SMOKE_TIMEOUT:g} s:\n{stderr[-3000:]}")
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


@pytest.mark.slow
@pytest.mark.timeout(SMOKE_TIMEOUT + 60)
@pytest.mark.parametrize("row", ROWS, ids=[r.key for r in ROWS])
def test_each_row_runs_in_smoke_mode(row: Row, tmp_path: Path) -> None:
    if row.needs_postgres and find_bin_dir() is None:
        skip_or_fail(f"row {row.key} needs PostgreSQL's initdb/pg_ctl (apt-get install postgresql)")
    out = tmp_path / "figures.json"
    result = _run_smoke(row, out)
    assert result.returncode == 0, f"row {row.key} failed:\n{result.stderr[-3000:]}"
    figures = json.loads(out.read_text(encoding="utf-8"))["figures"]
    assert figures, f"row {row.key} gave no figure"
    assert [f["row"] for f in figures] == [number(row)] * len(figures)
    assert [f["error"] for f in figures if f["error"]] == []
    assert all(f["met"] is None for f in figures), "a smoke run must not judge goals"
    assert f"\n{number(row)}  " in result.stdout, "the table shows the row under its number"


def test_every_row_module_is_in_the_row_table() -> None:
    defines_row = re.compile(r"^ROW = Row\(", re.MULTILINE)
    modules = sorted(
        p.stem for p in (ROOT / "bench").glob("*.py") if defines_row.search(p.read_text())
    )
    registered = sorted(row.run.__module__.removeprefix("bench.") for row in ROWS)
    assert registered == modules
    assert len({row.key for row in ROWS}) == len(ROWS)


def test_the_performance_docs_list_the_rows_of_the_row_table() -> None:
    lines = PERFORMANCE.read_text(encoding="utf-8").splitlines()
    documented = [m.groups() for m in map(_TABLE_LINE.match, lines) if m]
    assert documented == [(str(number(r)), r.key, r.title) for r in ROWS]


def test_a_smoke_run_takes_tiny_sizes_and_one_repeat(tmp_path: Path) -> None:
    smoke, quick = Settings(Mode.SMOKE, tmp_path), Settings(Mode.QUICK, tmp_path)
    assert (smoke.size(1000, 12), smoke.repeats(30, 5)) == (12, 1)
    assert (quick.size(1000, 12), quick.repeats(30, 5)) == (1000, 5)
