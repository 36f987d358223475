"""Type-check the whole package with mypy (settings in pyproject.toml); fail on any error.

    .venv/bin/python scripts/typecheck.py   # the CI step: errors, a count per package, exit 1
                                            # on any error anywhere in ollie_nb

mypy checks every module of ollie_nb (strictly core, planning, tools and llm); this script
prints its errors and a count per package. Every package is type-clean and stays so: one
error anywhere fails the step, and so does a mypy run that did not check (not installed,
bad config, crash).
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import re
import subprocess
import sys

_ERROR = re.compile(r"^(?P<path>ollie_nb/\S+?)\.py:\d+(?::\d+)?: error: ")
_CLEAN = re.compile(r"^Success: no issues found in \d+ source files?$", re.MULTILINE)


def module_of(path: str) -> str:
    """`ollie_nb/core/_turn` -> `ollie_nb.core._turn` (a package's `__init__` is the package)."""
    module = path.replace("/", ".")
    return module.removesuffix(".__init__")


def package_of(module: str) -> str:
    """The subpackage a module belongs to: `ollie_nb.core._turn` -> `ollie_nb.core`."""
    return ".".join(module.split(".")[:2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    run = subprocess.run(
        [sys.executable, "-m", "mypy"], capture_output=True, text=True, check=False
    )
    counts: collections.Counter[str] = collections.Counter()
    for line in run.stdout.splitlines():
        match = _ERROR.match(line)
        if match is not None:
            counts[package_of(module_of(match["path"]))] += 1
    sys.stdout.write(run.stdout + run.stderr)
    checked = run.returncode == 0 and _CLEAN.search(run.stdout) is not None
    if not checked and not counts:  # mypy missing, bad config, crash: nothing was checked
        print(f"\nmypy did not check the package (exit status {run.returncode}; output above)")
        return 2
    print("\nmypy errors per package:")
    root = pathlib.Path(__file__).resolve().parent.parent / "ollie_nb"
    packages = {f"ollie_nb.{p.parent.name}" for p in root.glob("*/__init__.py")}
    for package in sorted(packages | set(counts)):
        print(f"  {package:<20} {counts[package]:>4}")
    total = sum(counts.values())
    if total or not checked:
        print(f"\n{total} type error(s): the package must be type-clean")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
