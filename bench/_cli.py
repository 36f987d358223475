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

from bench import (
    extension_load,
    fanout,
    fanout_large,
    first_prompt,
    first_tool_call,
    lease_reclaim,
    notebook_tool,
    parallel_tools,
    plan_graph,
    plan_persistence,
    prompt_cache,
    status_read,
    task_store,
    task_store_pg,
    tool_call,
    tracing,
    turn_loop,
    watch,
    workers,
)
from bench._report import Figure, machine, render_table, write_json
from bench._run import Row, Settings

ROWS: tuple[Row, ...] = (
    tool_call.ROW,
    plan_persistence.ROW,
    extension_load.ROW,
    first_prompt.ROW,
    plan_graph.ROW,
    task_store.ROW,
    turn_loop.ROW,
    task_store_pg.ROW,
    watch.ROW,
    fanout.ROW,
    notebook_tool.ROW,
    prompt_cache.ROW,
    lease_reclaim.ROW,
    status_read.ROW,
    parallel_tools.ROW,
    workers.ROW,
    first_tool_call.ROW,
    fanout_large.ROW,
    tracing.ROW,
)


def _parser() -> argparse.ArgumentParser:
    rows = ", ".join(f"{r.number}={r.key}" for r in ROWS)
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Measure ollie_nb against its floors and print one table of medians.",
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
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
    known = {str(r.number) for r in ROWS} | {r.key for r in ROWS}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"unknown row {', '.join(unknown)}; rows: {', '.join(sorted(known))}")
    return [r for r in ROWS if str(r.number) in wanted or r.key in wanted]


def _isolate(scratch: Path) -> None:
    """Keep sessions, agents and backend settings of the run away from the user's own."""
    for var, sub in (("OLLIE_DATA_DIR", "data"), ("OLLIE_CONFIG_DIR", "config")):
        os.environ[var] = str(scratch / sub)
    os.environ["OLLIE_ENV_FILE"] = str(scratch / "config" / "env")
    for var in ("OLLIE_BACKEND", "OLLIE_MODEL"):
        os.environ.pop(var, None)


async def _run_row(row: Row, settings: Settings) -> list[Figure]:
    try:
        return await row.run(settings)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        return [
            Figure(
                row=row.number,
                what=row.title,
                unit="",
                ours=None,
                error=f"{type(exc).__name__}: {exc}",
            )
        ]


async def _run_all(rows: Sequence[Row], settings: Settings) -> list[Figure]:
    figures: list[Figure] = []
    for row in rows:
        print(f"row {row.number} ({row.key}): {row.title} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        figures += await _run_row(row, settings)
        seconds = time.perf_counter() - start
        print(f"row {row.number} done in {seconds:.1f} s", file=sys.stderr, flush=True)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen rows and print the table; exit 1 when a row could not be measured."""
    args = _parser().parse_args(argv)
    try:
        rows = select_rows(args.only)
    except ValueError as exc:
        _parser().error(str(exc))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ollie-bench-") as tmp:
        scratch = Path(tmp)
        _isolate(scratch)
        settings = Settings(quick=args.quick, scratch=scratch)
        figures = asyncio.run(_run_all(rows, settings))
    seconds = time.perf_counter() - start
    info = machine()
    print(
        f"ollie_nb bench ({'quick' if args.quick else 'full'} run, {seconds:.0f} s): "
        f"Python {info['python']}, mcp {info['packages']['mcp']}, "
        f"{info['usable_cpus']} CPUs; medians of n samples, "
        "ratio = ours / baseline as a cost, * = median of side-by-side pairs' ratios"
    )
    print(render_table(figures))
    if args.json:
        write_json(
            args.json,
            figures,
            {"quick": args.quick, "rows": [r.number for r in rows], "seconds": seconds},
        )
    return 1 if any(f.error for f in figures) else 0
