"""Whose mistake an error is, as a notebook user meets it in a real kernel.

A usage-like error is one UsageError line; a bug in ollie_nb is shown as one (its type,
`%ollie debug` for the traceback); an exception raised by the user's own code (a chat
backend, a fallback) is shown as theirs, with its traceback kept for `%ollie debug`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.notebook.test_frontend import LIST_PROMPT, kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.llm_fake_provider import FAKE_KEY, json_reply

BUG = "(a bug, not your input: %ollie debug shows the traceback)"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("nb_errors")
    k = Kernel(str(base), kernel_env(base))
    assert k.run("%load_ext ollie_nb").error is None
    yield k
    k.shutdown()


def test_a_usage_like_error_of_the_core_is_one_line(kernel):
    run = kernel.run("%ollie watch on")  # the default agent wires no task server
    assert run.error is None
    assert (
        run.stderr() == "UsageError: %ollie: no task server is wired (see the agent's mcpServers)\n"
    )
    assert "internal error" not in run.text()


def test_a_bug_in_ollie_nb_shows_as_a_bug_not_as_a_usage_line(kernel):
    # a KeyError raised inside ollie_nb's own code (the partial is C code: no frame of its own)
    patch = (
        "import functools, ollie_nb\ncore = ollie_nb.agent().core\n"
        "core.list_models = functools.partial(dict.__getitem__, {}, 'no-such-key')"
    )
    assert kernel.run(patch).error is None
    try:
        run = kernel.run("%ollie models")
    finally:
        kernel.run("del core.list_models")
    assert run.error is None
    assert "UsageError" not in run.stderr()
    assert run.text() == f"✖ internal error KeyError: 'no-such-key' {BUG}"
    debug = kernel.run("%ollie debug").text()
    assert debug.startswith("the last internal error:\nTraceback")
    assert "KeyError: 'no-such-key'" in debug


FLAKY = """
from ollie_nb.llm import OfflineBackend

class Flaky(OfflineBackend):
    async def chat_stream(self, messages, tools=(), params=None):
        raise ValueError("my sheet has no column 'total'")
        yield

flaky = Flaky()
"""


def test_the_users_own_chat_backend_failing_is_shown_as_theirs(kernel):
    assert kernel.run(textwrap.dedent(FLAKY)).error is None
    assert "backend: offline" in kernel.run("%ollie backend flaky").text()
    try:
        run = kernel.run("%%ollie\nhello")
    finally:
        kernel.run("%ollie backend offline")
    assert run.error is None and "UsageError" not in run.stderr()
    assert (
        "✖ your code raised ValueError: my sheet has no column 'total' "
        "(in chat_stream(); %ollie debug shows the traceback)"
    ) in run.texts()
    assert "internal error" not in run.text()
    debug = kernel.run("%ollie debug").text()
    assert debug.startswith("the last error, raised by your code:\nTraceback")
    assert 'raise ValueError("my sheet has no column' in debug  # the user's own line


def test_a_failing_fallback_keeps_its_traceback_for_debug(kernel):
    broken = "def broken(goal, steps):\n    raise ConnectionError('the spreadsheet is offline')"
    assert kernel.run(broken).error is None
    kernel.run("%ollie fallback broken")
    try:
        run = kernel.run(LIST_PROMPT)
    finally:
        kernel.run("%ollie fallback off")
    assert "broken() failed (the spreadsheet is offline)" in run.text()  # as before, in words
    debug = kernel.run("%ollie debug").text()
    assert debug.startswith("the last error, raised by your code:\nTraceback")
    assert "in broken" in debug and "ConnectionError: the spreadsheet is offline" in debug


TOOL = """
import ollie_nb
from ollie_nb.llm import OfflineBackend, ToolCall

@ollie_nb.tool
def lookup(key: str) -> str:
    \"\"\"Look a key up.\"\"\"
    return {"a": "1"}[key]

def script(messages, tools):
    if messages[-1].role == "tool":
        return "tool said: " + messages[-1].content
    return [ToolCall("c1", "lookup", '{"key": "zzz"}')]

ollie_nb.use_backend(OfflineBackend(script))
"""


def test_a_failing_notebook_tool_keeps_its_traceback_for_debug(kernel):
    assert kernel.run(textwrap.dedent(TOOL)).error is None
    try:
        run = kernel.run("%%ollie\nlook zzz up")
    finally:
        kernel.run("ollie_nb.remove_tool('lookup')\n%ollie backend offline")
    assert "tool said: error: KeyError: 'zzz'" in run.text()  # the model reads it, as before
    debug = kernel.run("%ollie debug").text()
    assert debug.startswith("the last error, raised by your code:\nTraceback")
    assert "in lookup" in debug and "KeyError: 'zzz'" in debug


def test_a_providers_failure_is_shown_as_the_providers_in_one_line(kernel, provider):
    """The provider answers `/models` with HTTP 503: its fault, neither a usage line nor a
    bug banner; the line says what to do and `%ollie debug` keeps the traceback."""
    provider.queue(*[json_reply(503, {"error": {"message": "overloaded"}})] * 3)
    backend = f"OpenAIBackend('m', base_url={provider.url + '/v1'!r}, api_key={FAKE_KEY!r})"
    code = (
        f"import ollie_nb\nfrom ollie_nb.llm import OpenAIBackend\nollie_nb.use_backend({backend})"
    )
    assert kernel.run(code).error is None
    try:
        run = kernel.run("%ollie models")
    finally:
        kernel.run("%ollie backend offline")
    assert run.error is None and "UsageError" not in run.stderr()
    assert run.text() == (
        "✖ the chat provider failed: openai: HTTP 503: overloaded (not a bug: "
        "try again, or %ollie backend NAME to use another)"
    )
    debug = kernel.run("%ollie debug").text()
    assert debug.startswith("the last error, from the chat provider:\nTraceback")
    assert "LLMHTTPError" in debug and FAKE_KEY not in debug


def test_load_ext_imports_neither_the_core_nor_llm_nor_mcp(tmp_path):
    code = (
        "%load_ext ollie_nb\nimport sys\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'httpx', 'ipywidgets')"
        " or m.startswith(('ollie_nb.core', 'ollie_nb.llm', 'ollie_nb.tools', 'ollie_nb.planning'))))"
    )
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **kernel_env(tmp_path), "IPYTHONDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
