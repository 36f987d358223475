"""nbval settings for the tutorials: compare text, run offline, run in a directory of their own.

The notebooks are tested with `pytest --nbval` (pyproject's addopts): each notebook runs
in a fresh kernel and every cell's outputs are compared with the saved ones, after
sanitize.cfg.
"""

from __future__ import annotations

import os
import shutil
import tempfile
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


@contextmanager
def _kernel_cwd(workdir: Path) -> Iterator[None]:
    """Start nbval's kernel in `workdir` rather than next to the notebook.

    Each notebook writes its files under .ollie/ in its working directory; a directory of
    its own (named notebooks/, as the sanitizers expect) keeps test runs that overlap in
    one checkout from deleting each other's task databases.
    """
    import nbval.plugin

    start = nbval.plugin.RunningKernel

    def running_kernel(kernel_name: str, cwd: str | None = None, **kwargs: object) -> object:
        return start(kernel_name, cwd=str(workdir), **kwargs)

    nbval.plugin.RunningKernel = running_kernel
    try:
        yield
    finally:
        nbval.plugin.RunningKernel = start


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    # nbval starts a notebook's kernel while setting up its first cell; the kernel
    # inherits the environment and the working directory given at that moment.
    if not _is_notebook(item) or getattr(item.parent, "kernel", None) is not None:
        return (yield)
    root = Path(tempfile.mkdtemp(prefix=f"ollie-{item.path.stem}-"))
    item.config.add_cleanup(lambda: shutil.rmtree(root, ignore_errors=True))
    workdir = root / "notebooks"
    workdir.mkdir()
    with _offline_environment(), _kernel_cwd(workdir):
        return (yield)
