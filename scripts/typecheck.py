"""Type-check the whole package with mypy (settings in pyproject.toml) and gate on clean parts.

    .venv/bin/python scripts/typecheck.py           # the CI step: errors per package, exit 1
                                                    # on any error outside NOT_YET_CLEAN
    .venv/bin/python scripts/typecheck.py --strict  # exit 1 on any error at all

mypy checks every module of ollie_nb (strictly core, planning, tools and llm); this script
prints its errors and a count per package, and fails when a package that is type-clean gets
an error.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import re
import subprocess
import sys

# Packages (or modules) that are NOT yet type-clean: their errors are printed and counted but
# do not fail the step. Remove an entry once its package passes, so that it stays clean.
NOT_YET_CLEAN = (
    "ollie_nb.core",
    "ollie_nb.llm",
    "ollie_nb.notebook",
    "ollie_nb.tools",
)

_ERROR = re.compile(r"^(?P<path>ollie_nb/\S+?)\.py:\d+(?::\d+)?: error: ")


def module_of(path: str) -> str:
    """`ollie_nb/core/_turn` -> `ollie_nb.core._turn` (a package's `__init__` is the package)."""
    module = path.replace("/", ".")
    return module.removesuffix(".__init__")


def package_of(module: str) -> str:
    """The subpackage a module belongs to: `ollie_nb.core._turn` -> `ollie_nb.core`."""
    return ".".join(module.split(".")[:2])


def is_allowed(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in NOT_YET_CLEAN)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strict", action="store_true", help="fail on any error at all")
    args = parser.parse_args(argv)
    run = subprocess.run(
        [sys.executable, "-m", "mypy"], capture_output=True, text=True, check=False
    )
    if run.returncode not in (0, 1):  # 2: mypy itself failed (bad config, crash)
        sys.stdout.write(run.stdout + run.stderr)
        return 2
    counts: collections.Counter[str] = collections.Counter()
    gating: list[str] = []
    for line in run.stdout.splitlines():
        match = _ERROR.match(line)
        if match is None:
            continue
        module = module_of(match["path"])
        counts[package_of(module)] += 1
        if args.strict or not is_allowed(module):
            gating.append(line)
    sys.stdout.write(run.stdout)
    print("\nmypy errors per package:")
    root = pathlib.Path(__file__).resolve().parent.parent / "ollie_nb"
    packages = {f"ollie_nb.{p.parent.name}" for p in root.glob("*/__init__.py")}
    for package in sorted(packages | set(counts)):
        state = "not yet clean" if is_allowed(package) else "must be clean"
        print(f"  {package:<20} {counts[package]:>4}   ({state})")
    if gating:
        print(f"\n{len(gating)} error(s) in packages that must be type-clean:")
        print("\n".join(gating))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
