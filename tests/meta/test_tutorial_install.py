"""The README's tutorial install is what every tutorial imports, and what the tutorials check
(scripts/check_tutorials.py) installs: after it, Run All goes through every notebook."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
KERNEL = {"IPython", "ipykernel", "ipywidgets", "jupyter_client", "nbformat"}  # Jupyter's own


def check_tutorials():
    spec = importlib.util.spec_from_file_location(
        "check_tutorials", ROOT / "scripts/check_tutorials.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def requirement_names(extras: frozenset[str]) -> set[str]:
    """The distributions the base install plus `extras` pull in (extras of ollie-nb followed)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted, names, seen = list(extras), set(), set()
    requirements = list(project["dependencies"])
    while wanted:
        extra = wanted.pop()
        if extra not in seen:
            seen.add(extra)
            requirements += project["optional-dependencies"][extra]
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement)[0].lower().replace("_", "-")
        inner = re.match(r"ollie-nb\[([a-z0-9_,-]+)\]", requirement)
        if inner:
            names |= requirement_names(frozenset(inner[1].split(",")) - seen)
        names.add(name)
    return names


def imported_modules(notebook: Path) -> set[str]:
    cells = json.loads(notebook.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return set(re.findall(r"^\s*(?:from|import) ([A-Za-z_]\w*)", code, re.M))


def test_the_readme_tutorial_install_brings_what_every_tutorial_imports():
    extras = check_tutorials().readme_extras()
    assert extras == {"openai", "tutorials"}
    installed = requirement_names(extras)
    dists = packages_distributions()
    for notebook in sorted(ROOT.glob("notebooks/0*.ipynb")):
        for module in imported_modules(notebook) - set(sys.stdlib_module_names) - KERNEL:
            if module == "ollie_nb":
                continue
            found = {d.lower().replace("_", "-") for d in dists.get(module, [])}
            assert found & installed, f"{notebook.name} imports {module}: not in {sorted(extras)}"


def test_every_tutorial_names_an_install_within_the_readme_one():
    tool = check_tutorials()
    for notebook in sorted(ROOT.glob("notebooks/0*.ipynb")):
        assert tool.named_extras(notebook) <= tool.readme_extras(), notebook.name
