"""The `slow` marker: tests that start processes (kernels, browsers, servers, clusters).

`pytest -m "not slow"` is the fast set. Tests are marked here by what they use (a fixture,
a folder, a parameter); a test that starts a process by itself carries `@pytest.mark.slow`.
An unmarked test that starts a process fails with a message saying so, so the fast set
stays fast as tests are added.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Fixtures that start a process, or hand out a config or a database that the test starts one on
# ("client": tests/tasks/test_tasks_mcp.py's one server per module).
SLOW_FIXTURES = frozenset(
    {
        "ollie_tasks",
        "fake_task_server",
        "pg_cluster",
        "kernel",
        "lab",
        "everything",
        "tasks_url",
        "client",
    }
)

# Folders whose every test runs a kernel or a browser.
SLOW_FOLDERS = (ROOT / "tests" / "notebook", ROOT / "tests" / "browser")

# tests/core modules whose every test runs task servers or other processes (marked here so
# their files need no change).
SLOW_CORE_MODULES = frozenset(
    {
        "test_budget_runs.py",
        "test_claim_leases.py",
        "test_collisions.py",
        "test_parallel_plans.py",
        "test_parallel_reads.py",
        "test_parallel_tools.py",
        "test_plan_review.py",
        "test_step_words.py",
        "test_task_events.py",
        "test_trace_store.py",
        "test_watch_pages.py",
        "test_workers.py",
    }
)

# Single tests of tests/core that start processes (marked here so their files need no change).
SLOW_CORE_TESTS = frozenset(
    {
        "tests/core/test_agent_config.py::test_full_ollie_config_loads",
        "tests/core/test_agent_core.py::test_execute_code_runs_in_workdir_with_timeout",
        "tests/core/test_agent_env_vars.py::test_a_default_fills_an_unset_variable_and_ollie_python_is_the_kernels",
        "tests/core/test_provider_requests.py::test_plan_round_trip_persists_on_real_ollie_tasks",
        "tests/core/test_subagents.py::test_a_childs_tool_outside_trusted_tools_asks_the_parents_approver",
        "tests/core/test_tool_hooks.py::test_a_turn_error_hook_that_does_not_handle_it_is_asked_once_and_retries_go_on",
        "tests/core/test_tool_hooks.py::test_a_turn_error_hook_that_handles_the_first_error_skips_the_retries",
        "tests/core/test_tool_hooks.py::test_hook_commands_get_the_payload_as_ollie_variables",
        "tests/core/test_tool_hooks.py::test_post_tool_hook_appends_to_or_replaces_the_result",
        "tests/core/test_tool_hooks.py::test_pre_tool_hook_sees_the_call_and_can_deny_it",
        "tests/core/test_tool_hooks.py::test_turn_error_hook_that_exits_0_handles_the_error",
        "tests/core/test_tool_hooks.py::test_turn_error_hook_that_fails_leaves_the_error_unhandled",
        "tests/core/test_tracing.py::test_a_failed_tool_call_is_an_error_span",
        "tests/core/test_tracing.py::test_a_parallel_run_nests_each_step_and_its_sub_agent_turn_under_the_run",
        "tests/core/test_tracing.py::test_a_step_that_failed_is_an_error_span_and_the_others_are_not",
        "tests/core/test_tracing.py::test_a_turn_holds_its_model_requests_and_tool_calls_and_the_plan_span_names_the_tasks",
        "tests/core/test_tracing.py::test_an_endpoint_in_the_environment_without_the_extra_is_one_line_and_the_turn_runs",
        "tests/core/test_tracing.py::test_an_otlp_endpoint_in_the_environment_turns_tracing_on",
        "tests/core/test_tracing.py::test_message_contents_are_recorded_only_when_asked_and_then_redacted",
        "tests/core/test_tracing.py::test_off_by_default_a_turn_never_imports_opentelemetry",
        "tests/core/test_tracing.py::test_the_watch_works_each_step_in_a_trace_of_its_own_linked_to_the_plan",
    }
)

# Programs cheap enough to start in the fast set: shells and Graphviz start in milliseconds;
# `uname` runs once per process (the platform module, the openai SDK's platform headers), in
# whichever test asks first, so it says nothing about that test.
CHEAP_PROGRAMS = frozenset({"dot", "bash", "sh", "echo", "env", "uname"})


def is_slow(item: pytest.Item) -> bool:
    """True when `item` starts processes by what it uses (fixture, folder, parameter)."""
    path = Path(item.path)
    if path.suffix == ".ipynb" or any(path.is_relative_to(f) for f in SLOW_FOLDERS):
        return True
    if path.parent == ROOT / "tests" / "core" and path.name in SLOW_CORE_MODULES:
        return True
    if item.nodeid.partition("[")[0] in SLOW_CORE_TESTS:
        return True
    if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "postgresql" in callspec.params.values()


def mark_slow(items: list[pytest.Item]) -> None:
    """Add the `slow` marker to every item that starts processes by what it uses."""
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)


def _program(args: Any) -> str:
    """The program name a Popen call starts."""
    first = args if isinstance(args, str | bytes | os.PathLike) else args[0]
    return Path(os.fsdecode(first).split()[0]).name


class SpawnWatch:
    """Records the programs each test starts, to fail a fast test that starts a costly one."""

    def __init__(self) -> None:
        self.programs: list[str] = []
        self.paused = False  # in a teardown: a module's or the session's fixtures end there too
        self._original = subprocess.Popen.__init__

    def install(self) -> None:
        """Record every program started through subprocess (asyncio's too) from now on."""
        original, programs = self._original, self.programs

        def recording(popen: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
            original(popen, args, *rest, **kw)  # a program that could not start costs nothing
            if not self.paused:
                programs.append(_program(args))

        subprocess.Popen.__init__ = recording  # type: ignore[method-assign]

    def costly(self) -> list[str]:
        """The programs started since the last call that the fast set may not start."""
        started, self.programs[:] = list(self.programs), []
        return sorted({p for p in started if p not in CHEAP_PROGRAMS and not p.endswith(".sh")})

    def check(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """Fail a test outside the slow set, at its teardown, if it started a costly program."""
        costly = self.costly()
        if costly and report.when == "teardown" and item.get_closest_marker("slow") is None:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} starts {', '.join(costly)}: mark it @pytest.mark.slow "
                "(or give it a fixture that tests/support/slow.py lists)"
            )
