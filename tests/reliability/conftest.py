"""Fixtures of the reliability suite; it reuses the harnesses of the other test folders."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
for folder in ("llm", "notebook"):  # llm_fake_provider, kernel_harness and their test modules
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))

from llm_fake_provider import FakeProvider  # noqa: E402


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    """A fake provider HTTP server on 127.0.0.1 (OpenAI and Anthropic wire formats)."""
    server = FakeProvider()
    server.start()
    try:
        yield server
    finally:
        server.stop()
