"""Secrets in a real kernel: what the python tools give the model, what cells and
`%ollie debug` show, whichever backend is active (issues 23.2, 23.8, 22.6, 22.7)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel

PROJ = "sk-proj-" + "Zq4" * 16
GHP = "ghp_" + "Wm" * 18
HF = "hf_" + "abcdEFGH" * 4
LIVE = "sk-live-" + "7f" * 12  # an API key the kernel's environment holds
ENV_KEY = "sk-proj-" + "En9" * 16  # a key in the env file, for a backend that is not active

SETUP = textwrap.dedent(
    """
    import json
    import ollie_nb
    from ollie_nb.llm import OfflineBackend, ToolCall

    def script(*calls):
        batch = [ToolCall(f"c{i}", name, json.dumps(args)) for i, (name, args) in enumerate(calls)]
        ollie_nb.use_backend(OfflineBackend(turns=[batch, "finished"]))

    def tool_results():
        return [m.content for m in ollie_nb.agent().history if m.role == "tool"]

    def sent():
        return json.dumps([m.to_dict() for m in ollie_nb.agent().history])
    """
)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("kernel-secrets")
    env = kernel_env(base)
    env["HOME"] = str(base / "home")
    env["OPENAI_API_KEY"] = LIVE
    (base / "config").mkdir()
    (base / "config" / "env").write_text(f"OLLIE_OPENAI_KEY={ENV_KEY}\n")
    k = Kernel(str(base), env)
    k.base = base
    for cell in ["%load_ext ollie_nb", SETUP]:
        run = k.run(cell)
        assert run.error is None, run.error
    yield k
    k.shutdown()


def test_python_vars_and_last_error_hide_nested_and_formatted_secrets(kernel):
    """23.2: only top-level names were hidden; nested keys, reprs, strings and an
    exception's URL reached the model (python_vars and python_last_error run unasked)."""
    cell = textwrap.dedent(
        f"""
        from dataclasses import dataclass

        @dataclass
        class Client:
            api_key: str
            region: str = "eu"

        config = {{"openai": {{"api_key": "plain-looking-value-123"}}, "rows": 3}}
        client = Client("{GHP}")
        note = "{HF}"
        keys = ["AKIAIOSFODNN7EXAMPLE", "{PROJ}"]
        dsn = "postgresql://app@db/x?password=hunter2hunter2"
        """
    )
    assert kernel.run(cell).error is None
    failing = f"raise ValueError('GET https://api.example/v1?access_token={HF} then {GHP} refused')"
    assert kernel.run(failing).error is not None
    kernel.run("script(('python_vars', {}), ('python_last_error', {}))")
    run = kernel.run("%ollie ask what is in the notebook?")
    assert run.error is None, run.error
    listing, error = json.loads(kernel.run("print(json.dumps(tool_results()))").text())
    for secret in ("plain-looking-value-123", GHP, HF, "AKIAIOSFODNN7EXAMPLE", PROJ, "hunter2"):
        assert secret not in listing and secret not in error
    assert "'api_key': '***'" in listing and "api_key='***'" in listing
    assert "'rows': 3" in listing and "region='eu'" in listing  # the rest stays readable
    assert (
        "error: ValueError: GET https://api.example/v1?access_token=*** then *** refused" in error
    )
    assert GHP not in kernel.run("print(sent())").text()


def test_a_key_in_the_env_file_stays_hidden_after_a_backend_switch(kernel):
    """22.6: after `%ollie backend X` the env file's OLLIE_OPENAI_KEY was not a secret."""
    assert kernel.run("%ollie backend offline").error is None
    path = kernel.base / "config" / "env"
    kernel.run(f"script(('execute_code', {{'code': 'cat {path}'}}))")
    kernel.run("get_ipython().run_line_magic('config', 'OllieMagics.approval = \"allow\"')")
    run = kernel.run("%ollie ask show the env file")
    kernel.run("get_ipython().run_line_magic('config', 'OllieMagics.approval = \"ask\"')")
    assert run.error is None, run.error
    shown = run.text() + run.html()
    assert "OLLIE_OPENAI_KEY=***" in shown and ENV_KEY not in shown
    assert ENV_KEY not in kernel.run("print(sent())").text()


def test_debug_shows_the_last_internal_error_redacted(kernel):
    """23.8: `%ollie debug` showed `invalid header value b'Bearer sk-live-...'`."""
    cell = textwrap.dedent(
        """
        import os
        def boom(messages, tools):
            raise RuntimeError(f"invalid header value b'Bearer {os.environ['OPENAI_API_KEY']}'")
        ollie_nb.use_backend(OfflineBackend(boom))
        """
    )
    assert kernel.run(cell).error is None
    notice = kernel.run("%ollie ask hello")
    debug = kernel.run("%ollie debug")
    for run in (notice, debug):
        assert LIVE not in run.text() + run.html()
    assert "invalid header value b'Bearer ***'" in debug.text()
    assert "Traceback" in debug.text()


def test_a_failing_servers_stderr_is_redacted_where_the_agent_is_shown(kernel):
    """22.7: the stderr tail of a server that failed to connect was shown unredacted."""
    failing = (
        "import os, sys; sys.stderr.write('refused ' + os.environ['REMOTE_TOKEN'] + ' '"
        f" + '{GHP}' + chr(10)); sys.exit(2)"
    )
    token = "remote-" + "t" * 30
    agent = kernel.base / "failing.json"
    server = {"command": sys.executable, "args": ["-c", failing], "env": {"REMOTE_TOKEN": token}}
    agent.write_text(json.dumps({"mcpServers": {"remote": server}}))
    run = kernel.run(f"%ollie agent {agent}")
    assert run.error is None, run.error
    shown = run.text() + run.html()
    assert "refused *** ***" in run.text()
    assert token not in shown and GHP not in shown
    mcp = kernel.run("%ollie mcp")
    assert token not in mcp.text() + mcp.html()
    kernel.run("%ollie agent default")


def test_replies_load_no_remote_image_unless_the_user_opts_in(kernel):
    """23.3: a reply's remote image was fetched by the browser; off by default, a trait on."""
    image = "![chart](https://attacker.example/p.png?k=leak)"
    kernel.run(f"ollie_nb.use_backend(OfflineBackend(turns=['see {image}', 'again {image}']))")
    off = kernel.run("%ollie ask draw it").html()
    assert "<img" not in off and "[image: chart (from attacker.example, not loaded)]" in off
    assert kernel.run("%config OllieMagics.remote_images = True").error is None
    on = kernel.run("%ollie ask draw it again").html()
    kernel.run("%config OllieMagics.remote_images = False")
    assert '<img src="https://attacker.example/p.png?k=leak" alt="chart" />' in on


def test_a_failing_servers_stderr_is_redacted_when_the_kernels_agent_starts(tmp_path):
    """22.7: the agent configured for the kernel starts at the first `%ollie` after
    `%load_ext` and shows its servers' failures there: the stderr tail redacted."""
    token = "remote-" + "u" * 30
    failing = (
        "import os, sys; sys.stderr.write('refused ' + os.environ['REMOTE_TOKEN']); sys.exit(2)"
    )
    agent = tmp_path / "failing.json"
    server = {"command": sys.executable, "args": ["-c", failing], "env": {"REMOTE_TOKEN": token}}
    agent.write_text(json.dumps({"mcpServers": {"remote": server}}))
    env = kernel_env(tmp_path)
    env["HOME"] = str(tmp_path / "home")
    k = Kernel(str(tmp_path), env)
    try:
        assert k.run(f"get_ipython().config.OllieMagics.agent = {str(agent)!r}").error is None
        assert k.run("%load_ext ollie_nb").error is None
        run = k.run("%ollie status")
        assert run.error is None, run.error
        assert "refused ***" in run.text() and token not in run.text() + run.html()
    finally:
        k.shutdown()
