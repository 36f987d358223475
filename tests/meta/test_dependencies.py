"""Every package the code imports is declared in pyproject.toml; PostgreSQL's stay optional."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")


def _name(requirement: str) -> str:
    """`psycopg[binary]>=3.1; python_version < '3.11'` -> `psycopg` (PEP 503 normalised)."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match[0]).lower()


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    optional = {_name(r) for key, reqs in extras.items() if key != "dev" for r in reqs}
    return required, optional - {"ollie-nb"}


def _imported() -> dict[str, set[str]]:
    """Top-level modules imported by ollie_nb (outside the stdlib) -> the files importing them."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "ollie_nb").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "ollie_nb":
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_imported_package_is_declared() -> None:
    required, optional = _declared()
    distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, files in _imported().items():
        # A module not installed here (exceptiongroup on Python 3.11+) is named as it imports.
        names = {_name(d) for d in distributions.get(module, [module])}
        if not names & (required | optional):
            undeclared[module] = sorted(files)
    assert undeclared == {}


def test_postgresql_drivers_are_an_extra_not_a_requirement() -> None:
    required, _ = _declared()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    postgres = {_name(r) for r in project["optional-dependencies"]["postgres"]}
    assert postgres == {"psycopg", "psycopg-pool"}
    assert not postgres & required
    dev = " ".join(project["optional-dependencies"]["dev"])
    assert "postgres" in re.search(r"ollie-nb\[([^\]]*)\]", dev)[1].split(",")
