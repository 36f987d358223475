"""What a response cost: the provider's own figure, else the genai-prices table's for the model.

Most providers report tokens, not money (OpenRouter reports both). The price table of the
`genai-prices` package (kept by pydantic, updated with each release) prices the tokens of
the model in use, prompt-cache reads and writes included. A backend that runs on this
machine costs nothing; a model the table does not know has no price, which is said as
such and never shown as $0.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from enum import Enum
from functools import lru_cache
from typing import Any

from ollie_nb.llm._types import Usage

log = logging.getLogger("ollie_nb.llm")

LOCAL_BACKENDS = frozenset({"offline"})
"""Backends whose model runs here, without a provider: they cost nothing."""


class PriceSource(str, Enum):
    """Where the cost of a backend's responses comes from."""

    PROVIDER = "provider"  # the provider reports it with its usage
    TABLE = "genai-prices"  # the genai-prices table, for the model in use
    LOCAL = "local"  # a model run on this machine: $0
    UNKNOWN = "unknown"  # no price known for the model


def priced(usage: Usage, backend: str, model: str) -> Usage:
    """`usage` with its cost: the provider's when it gave one, else the table's for `model`
    on `backend` (0 for a local model); the cost stays None when no price is known."""
    if usage.cost is not None:
        return usage
    if backend in LOCAL_BACKENDS:
        return replace(usage, cost=0.0)
    cost = table_price(usage, backend, model)
    return usage if cost is None else replace(usage, cost=cost)


def price_source(backend: str, model: str) -> PriceSource:
    """Where this backend's cost comes from, for a model (a probe of one token)."""
    if backend in LOCAL_BACKENDS:
        return PriceSource.LOCAL
    if table_price(Usage(input_tokens=1), backend, model) is not None:
        return PriceSource.TABLE
    return PriceSource.UNKNOWN


def table_price(usage: Usage, backend: str, model: str) -> float | None:
    """The table's price in dollars of `usage` on `model`, or None when it knows no price."""
    found = _calc() if model else None
    if found is None:
        return None
    calc, table_usage = found
    counts = table_usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    try:
        return float(calc(counts, model, provider_id=backend).total_price)
    except LookupError:  # a provider or model the table does not list
        return None
    except Exception as exc:  # a table that cannot price these counts: no price, said once
        log.info("genai-prices could not price %s on %s: %s", model, backend, exc)
        return None


@lru_cache(maxsize=1)
def _calc() -> tuple[Any, Any] | None:
    """genai-prices' calc_price and Usage, imported on first use (it loads its table)."""
    try:
        from genai_prices import Usage as TableUsage
        from genai_prices import calc_price
    except ImportError:  # declared as a dependency; a broken install means no prices
        return None
    return calc_price, TableUsage
