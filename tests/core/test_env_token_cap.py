"""An environment token cap is a whole number of at least 1: below it is no cap, said in the
log, never a cap of 0 tokens that refuses every request."""

from __future__ import annotations

import logging

import pytest

from ollie_nb.core._budget import TOKENS_ENV, Budgets, Caps, env_budgets


@pytest.mark.parametrize("raw", ["0.5", "0.999", " 0.1 "])
def test_a_token_cap_below_one_is_no_cap_and_is_said(raw, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="ollie_nb.core"):
        assert env_budgets({TOKENS_ENV: raw}) == Budgets()
    assert f"{TOKENS_ENV}={raw.strip()!r} is no cap" in caplog.text
    assert "at least 1" in caplog.text


@pytest.mark.parametrize(("raw", "tokens"), [("1", 1), ("1.0", 1), ("2.7", 2), ("1000", 1000)])
def test_a_token_cap_of_one_or_more_is_its_whole_tokens(raw, tokens, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="ollie_nb.core"):
        assert env_budgets({TOKENS_ENV: raw}) == Budgets(session=Caps(tokens=tokens))
    assert caplog.text == ""
