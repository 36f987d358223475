"""What `%load_ext ollie_nb` adds to an IPython start, next to jupyter_ai_magics.

Each wall-time sample is a fresh `python -m IPython -c CODE` process; the variants run
side by side in a rotated order, with their own IPYTHONDIR. A second kind of sample
times the `%load_ext` line inside the process, free of the start-up's own noise; a third
the first `%ollie` command after it (`%ollie status`, offline: the agent's start).
Every variant reads bytecode from a cache of the row's own, warmed before timing, as an
installed package does: with PYTHONDONTWRITEBYTECODE set, each sample would otherwise
compile ollie_nb's modules from source.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings, alternate_sync, median, paired_ratio

ADDED_GOAL = 0.15
FIRST_COMMAND_GOAL = 0.3
AI_FACTOR = 5.0
BARE = "pass"
CHECKS = {
    "ollie_nb": "'ollie' in get_ipython().magics_manager.magics['line']",
    "jupyter_ai_magics": "'ai' in get_ipython().magics_manager.magics['line']",
}
_SECONDS = re.compile(r"load-seconds=([0-9.eE+-]+)")
_FIRST = re.compile(r"first-seconds=([0-9.eE+-]+)")


def _command(code: str) -> list[str]:
    return [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", "-c", code]


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(code), env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _failure(result: subprocess.CompletedProcess[str]) -> str:
    """The most telling line of a failed IPython run."""
    lines = [line.strip() for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error" in line]
    return (errors or lines or [f"exit code {result.returncode}"])[-1][:160]


def _load_check(extension: str, env: dict[str, str]) -> str:
    """Empty when `%load_ext extension` works in a fresh IPython; else why not."""
    code = f"%load_ext {extension}\nprint('extension-ok' if {CHECKS[extension]} else 'no magic')"
    result = _run(code, env)
    if result.returncode != 0 or "extension-ok" not in result.stdout:
        return _failure(result)
    return ""


def _timed(code: str, env: dict[str, str]) -> None:
    result = _run(code, env)
    if result.returncode != 0:
        raise RuntimeError(f"IPython -c {code!r} failed: {_failure(result)}")


def _in_process(extension: str, env: dict[str, str], into: list[float]) -> Callable[[], None]:
    """A variant that records how long the `%load_ext` line itself took."""
    code = (
        "import time as _t\n_s = _t.perf_counter()\n"
        f"%load_ext {extension}\nprint(f'load-seconds={{_t.perf_counter() - _s}}')"
    )

    def sample() -> None:
        result = _run(code, env)
        match = _SECONDS.search(result.stdout)
        if result.returncode != 0 or match is None:
            raise RuntimeError(f"%load_ext {extension} failed: {_failure(result)}")
        into.append(float(match.group(1)))

    return sample


def _first_command(env: dict[str, str], into: list[float]) -> Callable[[], None]:
    """A variant that records how long the first `%ollie status` after `%load_ext` took."""
    code = (
        "%load_ext ollie_nb\nimport time as _t\n_s = _t.perf_counter()\n"
        "%ollie status\nprint(f'first-seconds={_t.perf_counter() - _s}')"
    )
    offline = {**env, "OLLIE_BACKEND": "offline"}

    def sample() -> None:
        result = _run(code, offline)
        match = _FIRST.search(result.stdout)
        if result.returncode != 0 or match is None:
            raise RuntimeError(f"%ollie status failed: {_failure(result)}")
        into.append(float(match.group(1)))

    return sample


def _environment(scratch: Path) -> dict[str, str]:
    """The samples' environment: a private IPython profile and a bytecode cache of their own."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["IPYTHONDIR"] = str(scratch / "ipython")
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    return env


async def run(settings: Settings) -> list[Figure]:
    """Time bare IPython starts against starts that load the extensions."""
    repeats = settings.repeats(15, 4)
    env = _environment(Path(settings.scratch))
    _run(BARE, env)  # creates the profile, so no timed run pays for that
    variants: dict[str, Callable[[], None]] = {"bare": lambda: _timed(BARE, env)}
    inside: dict[str, list[float]] = {"ollie": [], "ai": [], "first": []}

    ollie_error = _load_check("ollie_nb", env)
    if not ollie_error:
        variants["ollie"] = lambda: _timed("%load_ext ollie_nb", env)
        variants["ollie_in"] = _in_process("ollie_nb", env, inside["ollie"])
        variants["first"] = _first_command(env, inside["first"])
        _first_command(env, [])()  # compiles what the first command loads into the cache
    has_ai = importlib.util.find_spec("jupyter_ai_magics") is not None
    ai_error = _load_check("jupyter_ai_magics", env) if has_ai else "not installed"
    if not ai_error:
        variants["ai"] = lambda: _timed("%load_ext jupyter_ai_magics", env)
        variants["ai_in"] = _in_process("jupyter_ai_magics", env, inside["ai"])

    times = alternate_sync(variants, repeats)

    def added(name: str) -> float:
        """The median of the per-repeat differences to the bare start run beside it."""
        return median([t - b for t, b in zip(times[name], times["bare"])])

    start = Figure(
        what="IPython start + %load_ext ollie_nb",
        unit="s",
        ours=None,
        baseline=median(times["bare"]),
        baseline_what="IPython start running `pass`",
        goal=f"added < {ADDED_GOAL:g} s",
        samples=repeats,
    )
    versus = Figure(
        what="%load_ext in process vs jupyter_ai_magics",
        unit="ms",
        ours=None,
        baseline_what=ai_error or "%load_ext jupyter_ai_magics in process",
        max_ratio=1 / AI_FACTOR,
        samples=repeats,
    )
    first = Figure(
        what="first %ollie command in process (status, offline)",
        unit="ms",
        ours=None,
        goal=f"< {FIRST_COMMAND_GOAL * 1000:g} ms",
        samples=repeats,
    )
    if ollie_error:
        start.error = versus.error = first.error = f"%load_ext ollie_nb: {ollie_error}"
        return [start, versus, first]
    ollie_added = added("ollie")
    start.ours = median(times["ollie"])
    start.paired = paired_ratio(times["ollie"], times["bare"])
    start.met = ollie_added < ADDED_GOAL
    start.note = f"added {ollie_added * 1000:.0f} ms (median of paired differences)"
    versus.ours = median(inside["ollie"]) * 1000
    if ai_error:
        versus.note = f"jupyter_ai_magics {ai_error}: comparison skipped"
    else:
        versus.baseline = median(inside["ai"]) * 1000
        versus.paired = paired_ratio(inside["ollie"], inside["ai"])
        versus.note = f"wall time added: {ollie_added * 1000:.0f} ms vs {added('ai') * 1000:.0f} ms"
    first.ours = median(inside["first"]) * 1000
    first.met = first.ours < FIRST_COMMAND_GOAL * 1000
    first.note = "the agent's start: the core, the llm layer and the built-in servers load here"
    return [start, versus, first]


ROW = Row("extension", "Extension load", run)
