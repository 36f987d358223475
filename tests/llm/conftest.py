"""Fixtures of the chat-backend tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_fake_provider import FakeProvider


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    """A fake provider HTTP server on 127.0.0.1, stopped after the test."""
    server = FakeProvider()
    server.start()
    try:
        yield server
    finally:
        server.stop()
