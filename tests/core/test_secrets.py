"""The Redactor reads the environment's secrets again as soon as the environment changes."""

from __future__ import annotations

import os

import pytest

from ollie_nb.core._secrets import Redactor

TOKEN = "tok-" + "q" * 24


def test_a_secret_set_after_a_read_is_hidden_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LATE_SERVICE_TOKEN", raising=False)
    redact = Redactor()
    assert redact(f"value {TOKEN}") == f"value {TOKEN}"  # not a secret yet: shown
    monkeypatch.setenv("LATE_SERVICE_TOKEN", TOKEN)
    assert redact(f"value {TOKEN}") == "value ***"  # within ENVIRON_TTL of the first read
    monkeypatch.setenv("LATE_DB", "postgresql://app:hunter2hunter2@db/x")
    assert redact("pw hunter2hunter2") == "pw ***"


def test_a_removed_secret_is_no_longer_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LATE_SERVICE_TOKEN", TOKEN)
    redact = Redactor()
    assert redact(TOKEN) == "***"
    del os.environ["LATE_SERVICE_TOKEN"]
    assert redact(TOKEN) == TOKEN


def test_an_unchanged_environment_is_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    redact = Redactor()
    redact.refresh()
    reads: list[int] = []
    monkeypatch.setattr(redact, "_scan", lambda: reads.append(1))
    for _ in range(100):
        redact.refresh()
        redact("a tool result")
    assert reads == []
