"""Run tutorial notebooks offline and save their outputs in place (what nbval compares with).

Usage: .venv/bin/python scripts/refresh_notebooks.py [notebooks/NN-name.ipynb ...]
Each runs in a fresh kernel, in an empty directory named notebooks/ (as the tests do), with
no provider keys and no OLLIE_* settings, so the saved outputs are the offline ones.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENROUTER_API_KEY")


def refresh(path: Path) -> None:
    """Execute one notebook and write it back with its new outputs (no timing metadata)."""
    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) / "notebooks"
        workdir.mkdir()
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(workdir)}},
            record_timing=False,
        )
        client.execute()
    # Widget state is saved as it was when the cell returned, not as the widget ended:
    # leave it out rather than save a stale picture.
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)
    print(f"refreshed {path.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    for name in [n for n in list(os.environ) if n in KEYS or n.startswith("OLLIE_")]:
        del os.environ[name]
    os.environ["OLLIE_ENV_FILE"] = os.devnull
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        refresh(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
