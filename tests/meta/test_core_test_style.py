"""One test style in tests/: cores come from the `make_core` fixture, tests are anyio tests.

A test that builds `AgentCore(...)` itself skips the fixture's defaults (offline model, a
tmp workdir, no autosave) and its teardown (every core closed, its servers stopped); a
nested `asyncio.run(scenario())` is a second async style beside `@pytest.mark.anyio`.
A file may do either only where ALLOWED says why; a file that stopped needing its entry
fails the check too, so the list stays true.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# file (relative to tests/) -> why it builds AgentCore( or calls asyncio.run( itself (a script
# run in a child process from a string is not a call here and needs no entry)
ALLOWED: dict[str, str] = {
    "conftest.py": "the make_core fixture itself: the one place a test's core is built",
    "support/fixtures/parallel_agent.py": "a child-process script: its own process, its own loop",
    "support/fixtures/durable_agent.py": "a child-process script: its own process, its own loop",
    "support/fixtures/second_agent.py": "a child-process script: its own process, its own loop",
    "notebook/test_plan_editor_follows.py": (
        "a NotebookRuntime builds its core on its own loop thread from a plain factory, as a "
        "notebook does; the test's thread must stay free to drain it"
    ),
    "support/llm_fake_provider.py": (
        "collect() drives one stream to its end on a fresh loop for the many sync provider "
        "tests; it builds no core"
    ),
    "tools/test_mcp_content.py": (
        "a session-scoped fixture fetches server-everything's image once, outside every test's loop"
    ),
}


def old_style_calls(source: str) -> list[str]:
    """Each `AgentCore(...)` or `asyncio.run(...)` call in `source` (code, not strings), as
    "name:line"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "AgentCore":
            found.append(f"AgentCore:{node.lineno}")
        elif (
            isinstance(func, ast.Attribute)
            and func.attr == "run"
            and isinstance(func.value, ast.Name)
            and func.value.id == "asyncio"
        ):
            found.append(f"asyncio.run:{node.lineno}")
    return found


def offenders() -> dict[str, list[str]]:
    """The files under tests/ with old-style calls: path relative to tests/ -> calls."""
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        calls = old_style_calls(path.read_text(encoding="utf-8"))
        if calls:
            found[path.relative_to(TESTS).as_posix()] = calls
    return found


def test_tests_build_cores_with_make_core_and_run_as_anyio_tests():
    unexcused = {name: calls for name, calls in offenders().items() if name not in ALLOWED}
    assert unexcused == {}, (
        "build cores with `await make_core(...)` (tests/conftest.py) in an "
        "`@pytest.mark.anyio async def` test, or say in ALLOWED why this file cannot"
    )


def test_every_excused_file_still_needs_its_entry():
    stale = ALLOWED.keys() - offenders().keys()
    assert stale == set(), "remove the entries of files that no longer need them"


def test_the_check_finds_both_calls_and_not_their_names_in_text():
    source = (
        "import asyncio\n"
        "core = AgentCore(OfflineBackend())\n"
        "asyncio.run(main())\n"
        "doc = 'AgentCore( and asyncio.run( in a string'\n"
        "runner.run(x)\n"
    )
    assert old_style_calls(source) == ["AgentCore:2", "asyncio.run:3"]
