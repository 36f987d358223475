"""Redacting a hostile text: 100,000 characters written to make the secret patterns backtrack.

Every text of HOSTILE goes through `redact` (what a tool's result, an event or a trace gets)
and `secret_paths` (the check of a tool call's arguments) in one call each, as a step body
from a shared store or an MCP server's result would. Goal: each under 100 ms. Baseline: an
ordinary text of the same length (prose with a few URLs). Before the URL patterns started
from `://`, the first text took 26 s at 60,000 characters: a pattern that reads the rest of
the text from every start takes time growing with the square of the length.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bench._report import Figure
from bench._run import Row, Settings, median
from ollie_nb.redaction import find_secrets, redact, secret_paths

CHARS = 100_000
SMOKE_CHARS = 2_000
GOAL_MS = 100.0

HOSTILE: dict[str, Callable[[int], str]] = {
    "a scheme's `://` then letters": lambda n: ("see x:// " + "a" * n)[:n],
    "letters then `://`": lambda n: "a" * (n - 3) + "://",
    "`a://` over and over": lambda n: ("a://" * n)[:n],
    "URLs with user info, no end": lambda n: ("x://a@" * n)[:n],
    "URLs with a query, no end": lambda n: ("x://a?" * n)[:n],
    "`sk-` over and over": lambda n: ("sk-" * n)[:n],
    "`api_key='` unclosed": lambda n: ("api_key='" + "b" * n)[:n],
}
"""Texts that hang a pattern reading from every start, built to a length."""


def ordinary(n: int) -> str:
    """Prose with a few URLs and no secret, `n` characters."""
    line = "The figures for region 7 are at https://example.com/data?page=2 as of Monday. "
    return (line * (n // len(line) + 1))[:n]


def check(text: str) -> None:
    """What a hostile text meets: redaction, and the check of a tool call's arguments."""
    redact(text)
    list(secret_paths({"body": text}))


def seconds(text: str, repeats: int) -> list[float]:
    """The seconds `check` takes on `text`, once per repeat."""
    times: list[float] = []
    for _ in range(repeats):
        began = time.perf_counter()
        check(text)
        times.append(time.perf_counter() - began)
    return times


async def run(settings: Settings) -> list[Figure]:
    """Time each hostile text against an ordinary text of the same length."""
    n, repeats = settings.size(CHARS, SMOKE_CHARS), settings.repeats(7, 3)
    find_secrets("warm up")  # detect-secrets loads on the first look: not part of a figure
    base = median(seconds(ordinary(n), repeats)) * 1000
    figures = []
    for what, build in HOSTILE.items():
        ms = median(seconds(build(n), repeats)) * 1000
        figures.append(
            Figure(
                what=f"{n:,} characters: {what}",
                unit="ms",
                ours=ms,
                baseline=base,
                baseline_what="ordinary text of the same length",
                goal=f"< {GOAL_MS:g} ms",
                met=ms < GOAL_MS,
                samples=repeats,
            )
        )
    return figures


ROW = Row("hostile-text", "Redaction of a hostile 100,000-character text", run)
