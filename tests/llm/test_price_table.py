"""What a response cost: the provider's figure first, $0 for a local model, else the price
table's for the model (every kind of token counted), and no price for one it does not know."""

from __future__ import annotations

import logging

import pytest

from ollie_nb.llm._prices import PriceSource, price_source, priced, table_price
from ollie_nb.llm._types import Usage

M = 1_000_000


def test_the_providers_own_cost_is_kept() -> None:
    usage = Usage(input_tokens=M, output_tokens=M, cost=0.5)
    assert priced(usage, "openai", "gpt-4o") is usage


def test_a_local_model_costs_nothing() -> None:
    assert priced(Usage(input_tokens=M), "offline", "gpt-4o").cost == 0.0
    assert price_source("offline", "gpt-4o") is PriceSource.LOCAL


def test_the_table_prices_a_known_model() -> None:
    usage = Usage(input_tokens=M, output_tokens=10)
    cost = table_price(usage, "openai", "gpt-4o")
    assert cost is not None and cost > 0
    assert priced(usage, "openai", "gpt-4o") == Usage(input_tokens=M, output_tokens=10, cost=cost)
    assert price_source("openai", "gpt-4o") is PriceSource.TABLE


def test_every_kind_of_token_counts_in_the_tables_price() -> None:
    def price(**counts: int) -> float | None:
        return table_price(Usage(**counts), "anthropic", "claude-sonnet-4-5")

    plain = price(input_tokens=M)
    assert plain is not None
    assert price(input_tokens=M, output_tokens=M) not in (None, plain)
    assert price(input_tokens=M, cache_read_tokens=M) not in (None, plain)
    assert price(input_tokens=M, cache_write_tokens=M) not in (None, plain)


@pytest.mark.parametrize(("backend", "model"), [("openai", "no-such-model"), ("nowhere", "gpt-4o")])
def test_a_model_or_provider_the_table_does_not_know_has_no_price(backend, model) -> None:
    usage = Usage(input_tokens=M)
    assert table_price(usage, backend, model) is None
    assert priced(usage, backend, model) is usage
    assert price_source(backend, model) is PriceSource.UNKNOWN


def test_no_model_has_no_price() -> None:
    assert table_price(Usage(input_tokens=M), "openai", "") is None


def test_counts_the_table_cannot_price_are_no_price_said_in_the_log(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="ollie_nb.llm"):
        assert table_price(Usage(input_tokens=10, cache_read_tokens=M), "openai", "gpt-4o") is None
    [record] = caplog.records
    assert record.getMessage().startswith("genai-prices could not price gpt-4o on openai: ")
    assert not record.getMessage().endswith(": None")
