"""The command line: pick rows, run them one after another, print one table, write JSON."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from bench._report import Figure, Numbered, machine, render_table, write_json
from bench._rows import ROWS, number
from bench._run import Mode, Row, Settings


def _parser() -> argparse.ArgumentParser:
    rows = ", ".join(f"{number(r)}={r.key}" for r in ROWS)
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Measure ollie_nb against its floors and print one table of medians.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fewer repeats at full sizes")
    mode.add_argument(
        "--smoke",
        action="store_true",
        help="every row once at tiny sizes, no goal judged: checks that each row still runs",
    )
    parser.add_argument("--list", action="store_true", help="print the rows' table and exit")
    parser.add_argument(
        "--only",
        action="append",
        metavar="ROW",
        help=f"run only these rows, by number or key, comma-separated ({rows})",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    return parser


def select_rows(only: Sequence[str] | None) -> list[Row]:
    """The rows named by --only (all when none); unknown names raise ValueError."""
    if not only:
        return list(ROWS)
    wanted = {w.strip().lower() for item in only for w in item.split(",") if w.strip()}
    known = {str(number(r)) for r in ROWS} | {r.key for r in ROWS}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"unknown row {', '.join(unknown)}; rows: {', '.join(sorted(known))}")
    return [r for r in ROWS if str(number(r)) in wanted or r.key in wanted]


def _isolate(scratch: Path) -> None:
    """Keep sessions, agents and backend settings of the run away from the user's own."""
    for var, sub in (("OLLIE_DATA_DIR", "data"), ("OLLIE_CONFIG_DIR", "config")):
        os.environ[var] = str(scratch / sub)
    os.environ["OLLIE_ENV_FILE"] = str(scratch / "config" / "env")
    for var in ("OLLIE_BACKEND", "OLLIE_MODEL"):
        os.environ.pop(var, None)


def row_table() -> str:
    """The rows' table, one `number  key  title` line each, as --list prints it."""
    width = max(len(r.key) for r in ROWS)
    return "\n".join(f"{number(r):>2}  {r.key:<{width}}  {r.title}" for r in ROWS)


async def _run_row(row: Row, settings: Settings) -> list[Numbered]:
    """The row's figures under its number; a row that raises gives one failed figure."""
    try:
        figures = await row.run(settings)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        figures = [Figure(what=row.title, unit="", ours=None, error=f"{type(exc).__name__}: {exc}")]
    return [Numbered(number(row), f) for f in figures]


async def _run_all(rows: Sequence[Row], settings: Settings) -> list[Numbered]:
    lines: list[Numbered] = []
    for row in rows:
        n = number(row)
        print(f"row {n} ({row.key}): {row.title} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        lines += await _run_row(row, settings)
        seconds = time.perf_counter() - start
        print(f"row {n} done in {seconds:.1f} s", file=sys.stderr, flush=True)
    return lines


def _mode(args: argparse.Namespace) -> Mode:
    return Mode.SMOKE if args.smoke else Mode.QUICK if args.quick else Mode.FULL


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen rows and print the table; exit 1 when a row could not be measured."""
    args = _parser().parse_args(argv)
    if args.list:
        print(row_table())
        return 0
    try:
        rows = select_rows(args.only)
    except ValueError as exc:
        _parser().error(str(exc))
    mode = _mode(args)
    judge = mode is not Mode.SMOKE
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ollie-bench-") as tmp:
        scratch = Path(tmp)
        _isolate(scratch)
        lines = asyncio.run(_run_all(rows, Settings(mode=mode, scratch=scratch)))
    seconds = time.perf_counter() - start
    info = machine()
    print(
        f"ollie_nb bench ({mode.value} run, {seconds:.0f} s): "
        f"Python {info['python']}, mcp {info['packages']['mcp']}, "
        f"{info['usable_cpus']} CPUs; medians of n samples, "
        "ratio = ours / baseline as a cost, * = median of side-by-side pairs' ratios"
        + ("" if judge else "; tiny sizes, goals not judged")
    )
    print(render_table(lines, judge=judge))
    if args.json:
        settings = {"mode": mode.value, "rows": [number(r) for r in rows], "seconds": seconds}
        write_json(args.json, lines, settings, judge=judge)
    return 1 if any(n.figure.error for n in lines) else 0
