"""Planted bugs the suite must catch: apply each mutant to a copy of the tree, run its tests.

Each mutant is a small, realistic bug in one feature: a file, an exact snippet of it, the
snippet's replacement, and the tests that cover the behaviour. For every mutant this
script copies the tree (the files git knows, as they are in the working tree) into a
temporary directory, replaces the snippet there, runs the covering tests with that copy
first on PYTHONPATH, and reports the mutant as killed (a test failed) or as a survivor
(every test passed). A snippet that no longer occurs exactly once is reported as stale:
the list must follow the code.

    python scripts/mutants.py            # the whole list (before a release)
    python scripts/mutants.py --quick    # the CI subset
    python scripts/mutants.py --list     # ids, files and covering tests
    python scripts/mutants.py ID ...     # only these mutants

Exit status 0 when every mutant run was killed, 1 when one survived or is stale.
Add a row with each feature or fix: the bug you planted by hand to see your test fail.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600.0  # s for one mutant's tests; a mutant that hangs them counts as killed


@dataclass(frozen=True)
class Mutant:
    """One planted bug: `original` (exactly once in `file`) becomes `mutated`."""

    id: str
    file: str
    original: str
    mutated: str
    tests: tuple[str, ...]
    what: str  # what a user would see go wrong
    quick: bool = False  # part of the CI subset (cheap tests, no kernels)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "compaction-quotes-old-summary",
        "ollie_nb/core/_compact.py",
        'if message.role != "user" or message.content.startswith(SUMMARY_HEAD):',
        'if message.role != "user":',
        (
            "tests/core/test_compaction.py::test_a_second_compaction_keeps_one_summary_and_never_quotes_the_first_as_the_users",
        ),
        "a second compaction quotes the first summary as one of the user's messages",
        quick=True,
    ),
    Mutant(
        "run-claims-the-step-the-agent-works",
        "ollie_nb/core/_watching.py",
        "if self.host.is_running and step_id == self.current:\n            return False\n",
        "return True\n",
        (
            "tests/core/test_parallel_plans.py::test_with_the_watch_on_a_parallel_run_and_the_agent_never_work_the_same_step",
        ),
        "with the watch on, a sub-agent works the step the agent is working itself",
    ),
    Mutant(
        "run-claim-leaves-queued-copy",
        "ollie_nb/core/_watching.py",
        "if len(kept) < len(queued):",
        "if False:",
        (
            "tests/core/test_parallel_plans.py::test_with_the_watch_on_a_parallel_run_and_the_agent_never_work_the_same_step",
        ),
        "a step the run claimed stays in the agent's queue and is worked twice",
        quick=True,
    ),
    Mutant(
        "any-task-tool-trusted",
        "ollie_nb/core/_routing.py",
        'is_task = server == self.task_server and tool.startswith("task_")',
        'is_task = tool.startswith("task_")',
        (
            "tests/reliability/test_trust.py::test_a_task_tool_of_a_server_that_is_not_the_task_server_asks_first",
        ),
        "a task_* tool of a server that is not the wired task server runs without asking",
        quick=True,
    ),
    Mutant(
        "child-gate-without-approver",
        "ollie_nb/core/_subagents.py",
        "        return self._parent.gate\n",
        '        return __import__("dataclasses").replace(self._parent.gate, approve=None)\n',
        (
            "tests/core/test_subagents.py::test_a_childs_tool_outside_trusted_tools_asks_the_parents_approver",
        ),
        "a sub-agent never asks the user: a tool outside trustedTools is silently denied",
        quick=True,
    ),
    Mutant(
        "child-gate-allows-everything",
        "ollie_nb/core/_subagents.py",
        "        return self._parent.gate\n",
        '        return __import__("dataclasses").replace(self._parent.gate, trusted=("*",))\n',
        (
            "tests/core/test_subagents.py::test_a_childs_tool_outside_trusted_tools_asks_the_parents_approver",
        ),
        "a sub-agent runs a tool outside trustedTools without asking",
        quick=True,
    ),
    Mutant(
        "approval-unanswered-allows",
        "ollie_nb/notebook/_approval.py",
        "        except asyncio.TimeoutError:\n            answer = DENY\n",
        "        except asyncio.TimeoutError:\n            answer = ONCE\n",
        (
            "tests/notebook/test_approval_timeouts.py::test_a_request_the_kernel_thread_never_takes_is_denied_after_the_timeout",
            "tests/notebook/test_approval_timeouts.py::test_a_widget_nobody_answers_is_denied_after_the_timeout",
        ),
        "an approval nobody answers (a widget never shown) runs the tool",
        quick=True,
    ),
    Mutant(
        "approval-widget-timeout-allows",
        "ollie_nb/notebook/_approval.py",
        'lambda: widget.decide(DENY, "no answer in time")',
        'lambda: widget.decide(ONCE, "no answer in time")',
        (
            "tests/notebook/test_approval.py::test_a_background_approval_nobody_answers_is_denied_when_its_time_is_up",
        ),
        "a background approval widget nobody answers allows the call when its time is up",
        quick=True,
    ),
    Mutant(
        "typed-approval-defaults-to-yes",
        "ollie_nb/notebook/_approval.py",
        'answer = ONCE if choice in ("o", "once", "y", "yes") else DENY',
        'answer = DENY if choice in ("n", "no") else ONCE',
        (
            "tests/notebook/test_approval.py::test_enter_or_a_stray_answer_at_the_typed_prompt_denies",
        ),
        "at the typed approval prompt, Enter or a stray answer allows the call",
        quick=True,
    ),
    Mutant(
        "bearer-prefix-accepted",
        "ollie_nb/tasks/_http.py",
        "return hmac.compare_digest(given, self._expected)",
        "return given.startswith(self._expected)",
        ("tests/tasks/test_tasks_mcp.py::test_the_http_guard_lets_in_exactly_the_token",),
        "ollie-tasks --http accepts `Authorization: Bearer <token>anything-appended`",
        quick=True,
    ),
    Mutant(
        "waker-goes-on-after-stop",
        "ollie_nb/core/_wake.py",
        "if result.error or result.interrupted:",
        "if result.error:",
        (
            "tests/core/test_task_events.py::test_after_stop_of_a_turn_the_watch_started_the_next_step_waits",
        ),
        "after %ollie stop of a turn the watch started, the agent starts the next step by itself",
        quick=True,
    ),
    Mutant(
        "watch-reads-one-page",
        "ollie_nb/core/_watch.py",
        "                if len(page) < PAGE:\n                    break\n",
        "                break\n",
        (
            "tests/core/test_task_events.py::test_more_than_a_page_of_events_in_one_change_are_all_read",
        ),
        "more than a page of events in one change: the rest (unblocked included) sit unread",
    ),
    Mutant(
        "session-id-checked-at-its-start-only",
        "ollie_nb/core/_sessions.py",
        "_SESSION_ID.fullmatch(session_id) is not None",
        "_SESSION_ID.match(session_id) is not None",
        (
            "tests/reliability/test_session_files.py::test_a_session_file_whose_id_points_outside_is_refused_on_load",
        ),
        "a session file whose id is `x/../../victim` loads, and every later save of it fails",
        quick=True,
    ),
    Mutant(
        "parallel-without-n-is-sequential",
        "ollie_nb/notebook/commands/plans.py",
        'parser.add_argument("--parallel", nargs="?", type=int, const=0, default=None, metavar="N")',
        'parser.add_argument("--parallel", nargs="?", type=int, const=None, default=None, metavar="N")',
        (
            "tests/notebook/test_parallel.py::test_parallel_without_n_runs_the_agents_max_parallel_at_once",
        ),
        "%ollie run --parallel without N works the queue one step at a time",
    ),
    Mutant(
        "parallel-width-ignores-max-parallel",
        "ollie_nb/core/_core.py",
        "width = parallel or self.max_parallel or self.subagents.limit",
        "width = parallel or self.max_parallel or 4",
        (
            "tests/notebook/test_parallel.py::test_parallel_without_n_runs_the_agents_max_parallel_at_once",
        ),
        "%ollie run --parallel without N runs four at once, not the agent's maxParallel",
    ),
    Mutant(
        "start-warnings-unredacted",
        "ollie_nb/core/_core.py",
        "        self.env.messages[:] = [self.redact(m) for m in self.env.messages]\n",
        "",
        (
            "tests/notebook/test_start_warnings.py::test_at_the_start_the_hook_warning_is_redacted",
            "tests/notebook/test_start_warnings.py::test_ollie_agent_and_mcp_show_the_hook_warning_redacted",
        ),
        "a failing agentSpawn hook's warning (API key included) is shown unredacted at the start",
        quick=True,
    ),
    Mutant(
        "postgres-writes-unlocked",
        "ollie_nb/tasks/_postgres.py",
        'raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))',
        "pass",
        (
            "tests/tasks/test_tasks_concurrency.py::test_a_reader_following_events_by_cursor_sees_every_event_once[postgresql]",
        ),
        "on PostgreSQL a reader following events by cursor misses events (the watch misses unblocked)",
    ),
    Mutant(
        "output-cap-per-write",
        "ollie_nb/tools/_pyexec.py",
        "room = self.cap - self.kept",
        "room = self.cap",
        (
            "tests/tools/test_notebook_tools.py::test_many_small_prints_stay_capped_for_the_whole_run",
        ),
        "python_exec's output cap applies to each write: a loop of prints fills the context",
        quick=True,
    ),
    Mutant(
        "allow-once-remembered",
        "ollie_nb/notebook/_approval.py",
        "        if answer == SESSION:\n            self.allowed.add(name)\n",
        "        if answer in (ONCE, SESSION):\n            self.allowed.add(name)\n",
        (
            "tests/notebook/test_approval.py::test_allow_once_allows_that_call_only_and_the_next_one_asks_again",
        ),
        "allow once is remembered: the next call of that tool runs without asking",
        quick=True,
    ),
)


def copy_tree(target: Path) -> None:
    """The files git knows (tracked and untracked, not ignored), as they are now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _write(path: Path, text: str) -> None:
    """Write a module and drop its cached bytecode (a same-size rewrite in the same second
    would otherwise be served stale); the other modules' caches are kept between runs."""
    path.write_text(text, encoding="utf-8")
    for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        cached.unlink()


def run_tests(tree: Path, tests: Sequence[str], timeout: float) -> tuple[bool, str]:
    """Run `tests` in the copy: (passed, the end of their output); a hang counts as failed."""
    # only the plugins the tests use: nbval (whose imports take seconds) runs the notebooks
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    command += ["-p", "anyio", "-p", "pytest_timeout", "-o", "addopts=", *tests]
    try:
        done = subprocess.run(
            command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return False, f"(the tests hung past {timeout:g} s)"
    return done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def run_mutant(mutant: Mutant, tree: Path, verbose: bool) -> str:
    """'killed', 'survived' or 'stale' (the snippet is not in the file exactly once)."""
    path = tree / mutant.file
    source = path.read_text(encoding="utf-8")
    if source.count(mutant.original) != 1:
        return "stale"
    _write(path, source.replace(mutant.original, mutant.mutated))
    try:
        passed, output = run_tests(tree, mutant.tests, TIMEOUT)
    finally:
        _write(path, source)
    if verbose or passed:
        print(output)
    return "survived" if passed else "killed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="run only these mutants")
    parser.add_argument("--quick", action="store_true", help="only the CI subset")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every test output")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip running the tests unmutated first"
    )
    args = parser.parse_args(argv)
    unknown = set(args.ids) - {m.id for m in MUTANTS}
    if unknown:
        parser.error(f"no mutant named {', '.join(sorted(unknown))} (see --list)")
    chosen = [
        m for m in MUTANTS if (not args.ids or m.id in args.ids) and (m.quick or not args.quick)
    ]
    if args.list:
        for m in chosen:
            print(f"{m.id}{' (quick)' if m.quick else ''}: {m.file}\n  {m.what}")
            for test in m.tests:
                print(f"  {test}")
        return 0
    results: dict[str, str] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ollie-mutants-") as tmp:
        tree = Path(tmp)
        copy_tree(tree)
        if not args.no_baseline:  # a test that fails unmutated would "kill" every mutant
            tests = list(dict.fromkeys(t for m in chosen for t in m.tests))
            passed, output = run_tests(tree, tests, TIMEOUT * 2)
            print(f"baseline: the {len(tests)} covering tests {'pass' if passed else 'FAIL'}")
            if not passed:
                print(output)
                return 1
        for m in chosen:
            begun = time.monotonic()
            results[m.id] = run_mutant(m, tree, args.verbose)
            print(f"{results[m.id]:>8}  {m.id}  ({time.monotonic() - begun:.0f} s)", flush=True)
    bad = [i for i, r in results.items() if r != "killed"]
    print(
        f"{len(results) - len(bad)} of {len(results)} mutants killed "
        f"in {time.monotonic() - started:.0f} s"
        + (f"; not killed: {', '.join(bad)}" if bad else "")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
