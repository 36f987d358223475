"""What every benchmark row gets and gives: run settings, timing helpers, the row record."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from bench._report import Figure

T = TypeVar("T")


class Mode(Enum):
    """How hard a run measures."""

    FULL = "full"  # every repeat, full sizes: the figures docs/PERFORMANCE.md quotes
    QUICK = "quick"  # fewer repeats, full sizes
    SMOKE = "smoke"  # one repeat at tiny sizes, no goal judged: does every row still run?


@dataclass(frozen=True)
class Settings:
    """How hard to measure, and where scratch files go."""

    mode: Mode
    scratch: Path

    @property
    def smoke(self) -> bool:
        """Whether this is a smoke run: tiny sizes, one repeat, figures not held to goals."""
        return self.mode is Mode.SMOKE

    def repeats(self, full: int, quick: int) -> int:
        """The number of repeats for this run: `full`, `quick` under --quick, 1 under --smoke."""
        return {Mode.FULL: full, Mode.QUICK: quick, Mode.SMOKE: 1}[self.mode]

    def size(self, full: T, smoke: T) -> T:
        """A size (steps, tasks, seconds of work) for this run: `smoke` under --smoke."""
        return smoke if self.smoke else full


@dataclass(frozen=True)
class Row:
    """One row of the table: a key for --only, a title, and the coroutine measuring it.

    A row has no number of its own: bench/_rows.py numbers the rows by their place in it.
    """

    key: str
    title: str
    run: Callable[[Settings], Awaitable[list[Figure]]]
    needs_postgres: bool = False  # starts a throwaway cluster: initdb and pg_ctl must exist


def median(samples: Sequence[float]) -> float:
    """The median of the samples."""
    return statistics.median(samples)


def paired_ratio(ours: Sequence[float], baseline: Sequence[float]) -> float:
    """The median of ours / baseline over runs made side by side (same repeat, same round)."""
    return median([o / b for o, b in zip(ours, baseline)])


def _orders(names: Sequence[str], repeats: int, start: int = 0) -> list[list[str]]:
    """One running order per repeat, rotated so that no variant always runs first."""
    names = list(names)
    shifts = [(start + r) % len(names) for r in range(repeats)]
    return [names[k:] + names[:k] for k in shifts]


async def alternate(
    variants: Mapping[str, Callable[[], Awaitable[Any]]], repeats: int, *, start: int = 0
) -> dict[str, list[float]]:
    """Time each variant once per repeat, side by side; return the seconds of each run.

    `start` shifts the rotation, for callers that time one repeat per call.
    """
    times: dict[str, list[float]] = {name: [] for name in variants}
    for order in _orders(list(variants), repeats, start):
        for name in order:
            began = time.perf_counter()
            await variants[name]()
            times[name].append(time.perf_counter() - began)
    return times


def alternate_sync(
    variants: Mapping[str, Callable[[], Any]], repeats: int
) -> dict[str, list[float]]:
    """Like `alternate`, for plain functions."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for order in _orders(list(variants), repeats):
        gc.collect()
        for name in order:
            began = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - began)
    return times
