"""JupyterLab or Notebook 7 in Chromium for tests: open a notebook, run its cells as a person
does, measure.

Skips (pytest.skip) where Chromium or playwright is missing. The server runs in a
throwaway root with the offline model and private ollie dirs; it is stopped on exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.waits import wait_until

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass(frozen=True)
class Front:
    """A notebook front end: the module that serves it (with its own arguments), the URL path
    a notebook opens at, and a page predicate true once the notebook's kernel is ready."""

    module: str
    notebooks: str
    ready: str
    args: tuple[str, ...] = ()


# JupyterLab's status bar says Idle once the kernel is up. Notebook 7 has no status bar and
# its toolbar's indicator says idle before the kernel connects: ask the app (exposed).
LAB = Front("jupyterlab", "lab/tree", "() => document.body.innerText.includes('Idle')")
NOTEBOOK7 = Front(
    "notebook",
    "notebooks",
    """() => {
  const kernel = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}""",
    ("--expose-app-in-browser",),
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_notebook(path: Path, cells: list[str]) -> None:
    cell = lambda src: {  # noqa: E731
        "cell_type": "code",
        "metadata": {},
        "source": src,
        "outputs": [],
        "execution_count": None,
    }
    spec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb = {"cells": [cell(c) for c in cells], "metadata": {"kernelspec": spec}}
    path.write_text(json.dumps({**nb, "nbformat": 4, "nbformat_minor": 5}))


@contextlib.contextmanager
def lab_page(
    root: Path, cells: list[str], env: dict[str, str], front: Front = LAB
) -> Iterator[Any]:
    """A Chromium page (1280 px wide) showing `cells` in `front` (JupyterLab unless told), none
    run yet."""
    if CHROMIUM is None:
        pytest.skip("no chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    write_notebook(root / "t.ipynb", cells)
    port = _free_port()
    args = [sys.executable, "-m", front.module, "--no-browser", f"--port={port}", "--allow-root"]
    args += ["--IdentityProvider.token=t", f"--ServerApp.root_dir={root}", *front.args]
    server = subprocess.Popen(
        args, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _open(page, f"http://127.0.0.1:{port}/{front.notebooks}/t.ipynb?token=t", front.ready)
            yield page
            browser.close()
    finally:
        server.terminate()
        server.wait(10)


def _open(page: Any, url: str, ready: str) -> None:

    failed: list[Exception] = []

    def opened() -> bool:
        try:
            page.goto(url)
        except Exception as exc:  # the server is not serving the page yet
            failed[:] = [exc]
            return False
        return True

    try:
        wait_until(opened, 60, f"the page {url} to open", interval=0.5)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last: {failed}") from None
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=60_000)
    page.wait_for_function(ready, timeout=60_000)


def run_cell(page: Any, index: int, wait_for: str = "", timeout: float = 60) -> None:
    """Select cell `index`, Shift+Enter; wait until its prompt shows a number (or `wait_for`)."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-prompt").click()
    page.keyboard.press("Shift+Enter")
    if wait_for:
        page.wait_for_function(wait_for, arg=index, timeout=timeout * 1000)
        return
    page.wait_for_function(
        "(i) => /\\[\\d+\\]/.test(document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
        ".querySelector('.jp-InputArea-prompt').innerText)",
        arg=index,
        timeout=timeout * 1000,
    )
