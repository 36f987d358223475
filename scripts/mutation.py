"""The mutation step: mutmut mutates the modules whose logic is pure enough to mutate quickly
and runs their fast tests on each mutant; a module must kill 85% of its mutants.

mutmut (configured in pyproject.toml's [tool.mutmut]: the files, the tests, the pytest
arguments) copies the package and the tests into mutants/, makes every small change it
knows (an operator, a constant, a condition, a call's argument) one at a time, and runs
the tests that reach the changed function. A mutant the tests do not fail survived. This
script runs it on the functions listed in MODULES, reads its results, and prints per
module: killed, survived, timeout, equivalent (listed in scripts/mutation_equivalent.txt
with the reason the change cannot be seen), and the kill rate of the rest.

    python scripts/mutation.py              # a fresh run, then the table (CI)
    python scripts/mutation.py --jobs 2     # mutants at once (default: the cores)
    python scripts/mutation.py --report     # the table of the last run, without running
    python scripts/mutation.py --survivors  # also each survivor's name (mutmut show NAME)

Exit status 0 when every module kills at least 85% of its mutants that are not equivalent,
1 when one does not, 2 when mutmut failed. docs/DEVELOPMENT.md has the last table.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "mutants"
EQUIVALENT = ROOT / "scripts" / "mutation_equivalent.txt"
THRESHOLD = 0.85


@dataclass(frozen=True)
class Module:
    """A mutated module: its file and the functions of it mutated (mutmut name patterns)."""

    name: str
    file: str
    functions: tuple[str, ...] = ("*",)

    def patterns(self) -> list[str]:
        """mutmut's names of this module's mutants: `pkg.mod.x_func__mutmut_3`, and
        `pkg.mod.xǁClassǁmethod__mutmut_3` for methods."""
        dotted = self.file.removesuffix(".py").replace("/", ".")
        return [f"{dotted}.{function}" for function in self.functions]


MODULES: tuple[Module, ...] = (
    Module(
        "ledger and caps",
        "ollie_nb/core/_budget.py",
        (
            "xǁCapsǁ*",
            "xǁLedgerǁ*",
            "xǁReservationǁ*",
            "x_env_budgets__*",
            "x__env_caps__*",
            "x__positive__*",
            "x__whole_tokens__*",
            "x__lower__*",
        ),
    ),
    Module("spend", "ollie_nb/planning/_spend.py"),
    Module("prices", "ollie_nb/llm/_prices.py"),
    Module(
        "redactor and secret detection",
        "ollie_nb/redaction.py",
        (
            "x_redact__*",
            "x__masked__*",
            "x__spans__*",
            "x_find_secrets__*",
            "x_is_secret_name__*",
            "x_is_secret_value__*",
        ),
    ),
    Module(
        "drafts and their edits",
        "ollie_nb/planning/_draft.py",
        (
            "xǁPlanDraftǁedits__*",
            "xǁPlanDraftǁadd__*",
            "xǁPlanDraftǁdelete__*",
            "xǁPlanDraftǁmove__*",
        ),
    ),
    Module("step states", "ollie_nb/planning/_state.py"),
    Module("queue", "ollie_nb/core/_queue.py"),
)

# mutmut's exit codes of a mutant's test run (mutmut/stats.py), as this table counts them.
KILLED = {1: "killed", 3: "killed", 36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout"}
KILLED |= {255: "timeout", -11: "killed", -9: "killed", 37: "killed"}
NOT_RUN = {None, 2, 34}  # not checked, interrupted, skipped


def run_mutmut(jobs: int) -> int:
    """A fresh mutmut run on MODULES' functions (mutmut keeps old copies, so none is kept)."""
    shutil.rmtree(OUT, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # its copy is imported
    mutmut = Path(sys.executable).with_name("mutmut")
    patterns = [p for module in MODULES for p in module.patterns()]
    command = [str(mutmut), "run", "--max-children", str(jobs), *patterns]
    return subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL).returncode


def results(module: Module) -> dict[str, int | None]:
    """Exit code of each of the module's selected mutants in the last run."""
    meta = OUT / f"{module.file}.meta"
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    patterns = module.patterns()
    return {k: v for k, v in codes.items() if any(fnmatch.fnmatch(k, p) for p in patterns)}


def equivalent() -> dict[str, str]:
    """The listed equivalent mutants: name, then the reason the change cannot be seen."""
    listed: dict[str, str] = {}
    for line in EQUIVALENT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            listed[name] = reason.strip()
    return listed


@dataclass
class Row:
    """One module's counts."""

    module: Module
    counts: Counter[str]
    survivors: list[str]

    @property
    def rate(self) -> float:
        c = self.counts
        tested = c["killed"] + c["timeout"] + c["survived"]
        return 1.0 if not tested else (c["killed"] + c["timeout"]) / tested


def tally(module: Module, listed: dict[str, str]) -> Row:
    """Count a module's mutants; a listed equivalent that a test kills counts as killed."""
    counts: Counter[str] = Counter()
    survivors = []
    for name, code in sorted(results(module).items()):
        if name in listed and code not in KILLED:
            counts["equivalent"] += 1
        elif code in NOT_RUN:
            counts["not run"] += 1
        elif code in KILLED:
            counts[KILLED[code]] += 1
        else:  # survived (0), no test reached it (33, 5), suspicious: not killed
            counts["survived"] += 1
            survivors.append(name)
    return Row(module, counts, survivors)


def table(rows: list[Row]) -> str:
    """The per-module table, Markdown as docs/DEVELOPMENT.md shows it."""
    head = "| module | file | killed | survived | timeout | equivalent | kill rate |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        c = row.counts
        lines.append(
            f"| {row.module.name} | `{row.module.file}` | {c['killed']} | {c['survived']} "
            f"| {c['timeout']} | {c['equivalent']} | {row.rate:.0%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--report", action="store_true", help="the last run's table only")
    parser.add_argument("--survivors", action="store_true", help="list each survivor")
    args = parser.parse_args(argv)
    started = time.monotonic()
    if not args.report and run_mutmut(args.jobs) != 0:
        print("mutmut failed (run it as this script does to see why)")
        return 2
    listed = equivalent()
    rows = [tally(module, listed) for module in MODULES]
    print(table(rows))
    for row in rows:
        if args.survivors and row.survivors:
            print(f"\n{row.module.name}: " + "\n  ".join(["", *row.survivors]))
    low = [row.module.name for row in rows if row.rate < THRESHOLD or row.counts["not run"]]
    print(
        f"\n{time.monotonic() - started:.0f} s" + (f"; below 85%: {', '.join(low)}" if low else "")
    )
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main())
