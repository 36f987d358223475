"""The one table of bench rows: a row's number is its place here, and nowhere else.

docs/PERFORMANCE.md quotes these numbers (its table of rows is checked against this one by
tests/bench/test_bench_rows.py). A new row goes at the end, so the others keep their numbers.
"""

from __future__ import annotations

from bench import (
    board,
    extension_load,
    fanout,
    fanout_large,
    first_mcp_call,
    first_prompt,
    first_tool_call,
    hostile_text,
    inbox_wait,
    lease_reclaim,
    notebook_call,
    notebook_tool,
    parallel_tools,
    plan_cell,
    plan_graph,
    plan_graph_large,
    plan_persistence,
    prompt_cache,
    session_log,
    status_read,
    task_store,
    task_store_pg,
    tool_call,
    tracing,
    turn_loop,
    watch,
    worker_steps,
    workers,
)
from bench._run import Row

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
    notebook_tool.ROW,
    fanout.ROW,
    prompt_cache.ROW,
    lease_reclaim.ROW,
    parallel_tools.ROW,
    status_read.ROW,
    workers.ROW,
    first_tool_call.ROW,
    fanout_large.ROW,
    tracing.ROW,
    hostile_text.ROW,
    notebook_call.ROW,
    plan_graph_large.ROW,
    first_mcp_call.ROW,
    plan_cell.ROW,
    session_log.ROW,
    worker_steps.ROW,
    board.ROW,
    inbox_wait.ROW,
)


def number(row: Row) -> int:
    """The row's number: its place in ROWS, counted from 1."""
    return ROWS.index(row) + 1


def by_key(key: str) -> Row:
    """The row of this key; KeyError when there is none."""
    for row in ROWS:
        if row.key == key:
            return row
    raise KeyError(key)
