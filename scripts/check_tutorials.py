"""Run every tutorial top to bottom after exactly the README's tutorial install, in a fresh venv.

    python3 scripts/check_tutorials.py              # fresh venv in $TUTORIALS_VENV
    python3 scripts/check_tutorials.py --reuse      # keep that venv (still reinstalls ollie_nb)
    python3 scripts/check_tutorials.py notebooks/07-notebook-tools.ipynb

What a new user does: a fresh venv, the README's tutorial install (`pip install -e
'.[openai,tutorials]'`, read from the README's install block, so the check follows what the
README says) plus `jupyter nbclient`, then each notebook. A notebook whose first cell names an
extra that install lacks fails the check before anything runs. Every notebook runs with
nbclient in a copy of the repository, with no OLLIE_* setting, API key or user config of this
machine. Outputs are not compared (pytest's nbval does that in the dev venv); a cell that
raises fails the check. scripts/check_binder.sh does the same for the Binder image (slower).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALL = re.compile(r"pip install (?:-e )?'\.\[([a-z0-9_,-]+)\]'")
README_TUTORIALS = re.compile(r"^pip install -e '\.\[([a-z0-9_,-]+)\]' +# the tutorials\b", re.M)

RUNNER = """
import sys
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

nb = nbformat.read(sys.argv[1], as_version=4)
client = NotebookClient(nb, timeout=600, kernel_name="python3",
                        resources={"metadata": {"path": "."}})
try:
    client.execute()
except CellExecutionError as exc:
    print(str(exc)[-4000:], file=sys.stderr)
    sys.exit(1)
"""


def say(text: str) -> None:
    print(f"== {text}", flush=True)


def named_extras(notebook: Path) -> frozenset[str]:
    """The extras of the `pip install -e '.[...]'` line in the notebook's first cell."""
    import json

    cells = json.loads(notebook.read_text())["cells"]
    first = "".join(cells[0]["source"]) if cells else ""
    match = INSTALL.search(first)
    if match is None:
        sys.exit(f"check_tutorials: the first cell of {notebook.name} names no install")
    return frozenset(x.strip() for x in match[1].split(",") if x.strip())


def readme_extras(readme: Path = ROOT / "README.md") -> frozenset[str]:
    """The extras of the README's tutorial install line (`pip install -e '.[...]'  # the tutorials`)."""
    match = README_TUTORIALS.search(readme.read_text(encoding="utf-8"))
    if match is None:
        sys.exit("check_tutorials: the README has no tutorial install line")
    return frozenset(x.strip() for x in match[1].split(",") if x.strip())


def copy_repository(target: Path) -> None:
    """Tracked and unignored files only, as a clone would have them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            (target / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / os.fsdecode(name))


def pip(venv: Path, *args: str) -> None:
    run = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    # Leave out pip's notes about unusable find-links entries of a machine's pip config.
    noise = "WARNING: Location 'file:"
    sys.stderr.write("".join(x for x in run.stderr.splitlines(True) if not x.startswith(noise)))
    if run.returncode:
        sys.exit(f"check_tutorials: pip install {' '.join(args)} failed")


def clean_env(venv: Path, home: Path) -> dict[str, str]:
    """A user's fresh shell: the venv first on PATH, no settings of this machine."""
    return {
        "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }


def run_notebook(venv: Path, notebook: Path, env: dict[str, str]) -> tuple[bool, float, str]:
    started = time.monotonic()
    run = subprocess.run(
        [str(venv / "bin" / "python"), "-c", RUNNER, notebook.name],
        cwd=notebook.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return run.returncode == 0, time.monotonic() - started, run.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/0*.ipynb")
    parser.add_argument("--reuse", action="store_true", help="keep an existing venv")
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path(os.environ.get("TUTORIALS_VENV", "/tmp/ollie-tutorials-venv")),
    )
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or sorted(ROOT.glob("notebooks/0*.ipynb"))
    lacking = {nb.name: named_extras(nb) - readme_extras() for nb in notebooks}
    lacking = {name: extras for name, extras in lacking.items() if extras}
    if lacking:
        sys.exit(f"check_tutorials: the README's tutorial install lacks extras: {lacking}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ollie-tutorials-") as work:
        repo, home = Path(work) / "repo", Path(work) / "home"
        home.mkdir()
        say(f"repository copy in {repo}")
        copy_repository(repo)
        venv = args.venv
        if not (args.reuse and (venv / "bin" / "python").exists()):
            say(f"fresh venv {venv}")
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        extras = ",".join(sorted(readme_extras()))
        say(f"pip install -e '.[{extras}]' jupyter nbclient (the README's tutorial install)")
        pip(venv, "-e", f"{repo}[{extras}]", "jupyter", "nbclient")
        env = clean_env(venv, home)
        failed = []
        for notebook in notebooks:
            ok, seconds, log = run_notebook(venv, repo / "notebooks" / notebook.name, env)
            print(f"{'ok  ' if ok else 'FAIL'}  {notebook.name} ({seconds:.0f} s)", flush=True)
            if not ok:
                print(log, file=sys.stderr)
                failed.append(notebook.name)
    total = time.monotonic() - started
    if failed:
        say(f"{len(failed)} tutorial(s) failed in {total:.0f} s: {', '.join(failed)}")
        return 1
    say(f"every tutorial ran after the README's tutorial install ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
