"""The first call of a stdio tool with an output schema after connect, against a repeated call.

Each sample is a fresh Python process (what a first call loads is the point): it connects
an McpServer to bench/words_server.py (one tool returning structured content, which the
SDK checks against the tool's output schema), then times the first `count_words` call and
a second one. A first call used to load jsonschema and build its IRI grammars: seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings, median

WORDS_SERVER = Path(__file__).with_name("words_server.py")
GOAL = 2.0  # the first call within twice a repeated one, or ...
GOAL_FLOOR_MS = 50.0  # ... within 50 ms: a repeated call is a few ms, and noise is not a cost
PROBE = """
import asyncio, json, sys, time
from ollie_nb.tools import McpServer


async def main():
    server = McpServer("words", command=sys.executable, args=[sys.argv[1]])
    began = time.perf_counter()
    await server.connect()
    connected = time.perf_counter()
    first = await server.call_tool("count_words", {"text": "one two three"})
    called = time.perf_counter()
    repeat = await server.call_tool("count_words", {"text": "one two three four"})
    done = time.perf_counter()
    await server.aclose()
    assert (first.text, repeat.text) == ("3", "4"), (first, repeat)
    print(json.dumps([connected - began, called - connected, done - called]))


asyncio.run(main())
"""


async def _sample() -> tuple[float, float, float]:
    """(connect, first call, repeated call) in seconds, in a fresh process."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PROBE,
        str(WORDS_SERVER),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    if proc.returncode != 0:
        raise RuntimeError(f"the first-call probe failed: {err.decode()[-300:]}")
    connect, first, repeat = json.loads(out.decode().strip().splitlines()[-1])
    return connect, first, repeat


async def run(settings: Settings) -> list[Figure]:
    """A fresh process per sample: connect, first call, repeated call."""
    samples = settings.repeats(7, 3)
    runs = [await _sample() for _ in range(samples)]
    first = median([r[1] for r in runs]) * 1000
    repeat = median([r[2] for r in runs]) * 1000
    return [
        Figure(
            what="first stdio tool call after connect (output schema)",
            unit="ms",
            ours=first,
            baseline=repeat,
            baseline_what="the same tool's second call on the same session",
            goal=f"<= {GOAL:g}x or < {GOAL_FLOOR_MS:g} ms",
            met=None if settings.smoke else (first <= GOAL * repeat or first < GOAL_FLOOR_MS),
            samples=samples,
            note=f"connect (server start + handshake): {median([r[0] for r in runs]):.2f} s",
        )
    ]


ROW = Row("first-mcp-call", "First call of a stdio tool after connect", run)
