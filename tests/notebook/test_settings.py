"""Settings are checked where the user sets them: one clear line, and the old value stays.

Traits set with `%config` (IPython prints a TraitError as one `ERROR:` line), options on
a command line (one UsageError line), and an agent trait that names no agent (the
default agent starts, and `%ollie status` says what is wrong). The trait table in
docs/CONFIGURATION.md lists every trait of OllieMagics.
"""

from __future__ import annotations

import re

import pytest

from ollie_nb.notebook._magics import OllieMagics
from tests.support.agents import ROOT, kernel_env
from tests.support.kernel_harness import Kernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("settings")
    k = Kernel(str(base), kernel_env(base))
    k.base = base
    assert k.run("%load_ext ollie_nb").error is None
    yield k
    k.shutdown()


def trait(kernel, name: str) -> str:
    return kernel.run(f"print(repr(get_ipython().find_magic('ollie').__self__.{name}))").text()


@pytest.mark.parametrize(
    ("setting", "line", "kept"),
    [
        ("workdir = '/no/such/dir'", "OllieMagics.workdir: /no/such/dir is not a directory", "''"),
        ("fallback = 'csv'", "OllieMagics.fallback: 'csv' is not '' (none) or 'queue'", "''"),
        (
            "approval_timeout = -1",
            "OllieMagics.approval_timeout: -1.0 s must be more than 0",
            "180.0",
        ),
        ("watch_interval = -2", "OllieMagics.watch_interval: -2.0 s must be more than 0", "2.0"),
        ("result_chars = -5", "OllieMagics.result_chars: -5 must be 0 or more", "2000"),
        ("max_parallel = -1", "OllieMagics.max_parallel: -1 must be 0 or more", "0"),
    ],
)
def test_a_bad_trait_is_one_line_and_the_old_value_stays(kernel, setting, line, kept):
    run = kernel.run(f"%config OllieMagics.{setting}")
    assert run.error is None
    lines = run.text().strip().splitlines()
    assert len(lines) == 1 and line in lines[0], run.text()
    assert trait(kernel, setting.split()[0]).strip() == kept


def test_a_good_workdir_is_taken(kernel):
    run = kernel.run(f"%config OllieMagics.workdir = {str(kernel.base)!r}")
    assert run.text() == ""
    assert trait(kernel, "workdir").strip() == repr(str(kernel.base))
    kernel.run("%config OllieMagics.workdir = ''")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "plan --watch 0",
            "UsageError: %ollie plan: argument --watch: 0 s; give more than 0 seconds",
        ),
        (
            "plan --watch -1",
            "UsageError: %ollie plan: argument --watch: -1 s; give more than 0 seconds",
        ),
        ("run --parallel 0", "UsageError: %ollie run: argument --parallel: 0; give 1 or more"),
        ("watch on --interval 0", "UsageError: %ollie watch: argument --interval: 0 s; give more"),
        (
            "backend openai http://127.0.0.1:9",
            "UsageError: %ollie backend: http://127.0.0.1:9 is a URL, not a model: the syntax is "
            "%ollie backend NAME [MODEL]",
        ),
    ],
)
def test_a_bad_option_is_one_usage_line(kernel, line, message):
    run = kernel.run(f"%ollie {line}")
    assert run.stderr().startswith(message), run.stderr()
    assert len(run.stderr().strip().splitlines()) == 1
    assert "Widget" not in run.text() and not run.html()


def test_a_missing_agent_starts_the_default_and_status_says_why(tmp_path):
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    try:
        k.run("%load_ext ollie_nb")
        k.run("%config OllieMagics.agent = 'nosuch'")
        first = k.run("%ollie status")
        assert first.error is None and "UsageError" not in first.stderr(), first.stderr()
        assert "OllieMagics.agent 'nosuch' did not load (no agent named 'nosuch'" in first.text()
        assert "using the default agent" in first.text()
        status = k.run("%ollie status").text()
        assert re.search(r"agent problem\s+OllieMagics.agent 'nosuch' did not load", status), status
        assert re.search(r"agent\s+default", status)
        assert "1 request" in k.run("%ollie ask say hello").text()
    finally:
        k.shutdown()


def test_the_trait_table_lists_every_trait():
    table = (ROOT / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
    traits = set(OllieMagics.class_own_traits(config=True))
    assert traits - listed == set(), "traits missing from docs/CONFIGURATION.md"
    assert listed >= traits


def test_a_file_is_not_a_workdir(kernel):
    path = kernel.base / "notes.txt"
    path.write_text("x")
    run = kernel.run(f"%config OllieMagics.workdir = {str(path)!r}")
    assert f"OllieMagics.workdir: {path} is not a directory" in run.text()
    assert trait(kernel, "workdir").strip() == "''"


def test_agent_without_an_argument_shows_its_file_servers_and_trust(kernel):
    agent = kernel.base / "mine.json"
    agent.write_text('{"trustedTools": ["reasoning_*"]}')
    assert "agent: mine" in kernel.run(f"%ollie agent {agent}").text()
    shown = kernel.run("%ollie agent").text()
    assert re.search(rf"file\s+{re.escape(str(agent))}", shown), shown
    assert re.search(r"servers\s+\S", shown) and re.search(r"trust\s+the user's own", shown)
    assert re.search(r"trustedTools\s+reasoning_\*", shown), shown
    kernel.run("%ollie agent default")
