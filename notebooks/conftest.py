"""nbval settings for the tutorials: compare text, and run every notebook offline.

The notebooks are tested with `pytest --nbval` (pyproject's addopts): each cell is run
in a fresh kernel and its outputs compared with the saved ones, after sanitize.cfg.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SANITIZE = Path(__file__).with_name("sanitize.cfg")

# Plan graphs are SVG inside HTML, laid out by whatever graphviz is installed; their
# text/plain view says the same in words, and that is what is compared.
NOT_COMPARED = ("text/html", "image/svg+xml")

# Settings that would send a kernel to a real model or to the user's own files.
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENROUTER_API_KEY")


def _is_notebook(node: pytest.Item | pytest.Collector) -> bool:
    return node.path.suffix == ".ipynb"


def pytest_collectstart(collector: pytest.Collector) -> None:
    if _is_notebook(collector) and hasattr(collector, "skip_compare"):
        collector.skip_compare = (*collector.skip_compare, *NOT_COMPARED)
        option = collector.config.option
        if getattr(option, "nbval_sanitize_with", None) is None:
            option.nbval_sanitize_with = str(SANITIZE)


@contextmanager
def _offline_environment() -> Iterator[None]:
    """No provider keys, no OLLIE_* settings, no env file: the saved outputs are offline ones."""
    saved = dict(os.environ)
    for name in list(os.environ):
        if name in PROVIDER_KEYS or name.startswith("OLLIE_"):
            del os.environ[name]
    os.environ["OLLIE_ENV_FILE"] = os.devnull
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    # nbval starts a notebook's kernel while setting up its first cell; the kernel
    # inherits the environment of that moment.
    if not _is_notebook(item):
        return (yield)
    with _offline_environment():
        return (yield)
