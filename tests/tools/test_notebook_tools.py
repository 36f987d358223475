"""NotebookToolServer, PythonServer and the trust rules for them, in process (no kernel)."""

from __future__ import annotations

import threading

import pytest

from ollie_nb.core._routing import TrustGate
from ollie_nb.tools import Dispatcher, NotebookToolServer, PythonServer, Trust
from ollie_nb.tools._pyexec import REDACT_MARGIN, BoundedWriter, run_code
from ollie_nb.tools._pyvars import list_vars


class Bench:
    """A Workbench over a plain dict."""

    def __init__(self) -> None:
        self.ns: dict = {}
        self.proposed: list[str] = []
        self.shown: list = []

    def namespace(self) -> dict:
        return self.ns

    def rich(self, value) -> bool:
        self.shown.append(value)
        return False

    def propose(self, code: str) -> None:
        self.proposed.append(code)

    def last_error(self):
        return None


def gate(trusted, advice) -> TrustGate:
    return TrustGate(trusted, None, lambda s: s if s != "mcp" else None, None, advice=advice)


def test_trust_rules_for_advised_built_ins():
    tools = NotebookToolServer()
    tools.add(lambda: 1, name="mine")
    tools.add(lambda: 2, name="careful", trusted=False)
    python = PythonServer(Bench())
    servers = {"notebook": tools, "python": python}

    def advice(server, tool):
        return servers[server].tool_trust(tool) if server in servers else None

    default = gate(None, advice)
    assert default.trusts("mine", "notebook")
    assert not default.trusts("careful", "notebook")
    assert default.trusts("python_vars", "python") and default.trusts("python_propose", "python")
    assert not default.trusts("python_exec", "python")
    assert not default.trusts("mine", "mcp")  # an MCP tool of that name gets no advice
    listed = gate(("python_exec", "careful"), advice)
    assert listed.trusts("python_exec", "python")
    assert not listed.trusts("careful", "notebook")  # trusted=False asks whatever the list says
    assert not listed.trusts("mine", "notebook")  # a trustedTools list is the whole truth
    assert gate(("notebook/*",), advice).trusts("mine", "notebook")
    assert python.tool_trust("python_exec") is Trust.LISTED


def test_bad_names_and_signatures_are_refused():
    server = NotebookToolServer()
    with pytest.raises(ValueError, match="must be 1-64 letters"):
        server.add(lambda: 1)  # '<lambda>'
    with pytest.raises(ValueError, match="cannot describe its arguments"):
        server.add(lambda _hidden: 1, name="private_arg")
    with pytest.raises(TypeError):
        server.add(42, name="number")


@pytest.mark.anyio
async def test_async_tools_run_on_the_loop_and_sync_ones_through_the_runner():
    seen = {}

    async def runner(fn):
        seen["runner"] = threading.current_thread().name
        return fn()

    async def fetch(key: str) -> dict:
        seen["async"] = threading.current_thread().name
        return {"key": key}

    def plain(n: int) -> list[int]:
        return list(range(n))

    server = NotebookToolServer(runner)
    server.add(fetch)
    server.add(plain)

    d = Dispatcher()
    d.add_server("notebook", server)
    fetched, listed = (
        await d.dispatch("notebook", "fetch", {"key": "k"}),
        await d.dispatch("notebook", "plain", {"n": "3"}),
    )
    assert fetched.text == '{"key": "k"}' and listed.text == "[0, 1, 2]"
    assert "runner" in seen and seen["async"] == threading.current_thread().name


def test_run_code_keeps_the_namespace_the_value_and_the_error():
    ns: dict = {}
    run = run_code("x = 2\nprint('hi')\nx * 21", ns)
    assert run.output == "hi\n" and run.value == 42 and ns["x"] == 2
    assert run.text() == "hi\nvalue: 42"
    bad = run_code("def f(:\n", ns)
    assert bad.error.startswith("error: SyntaxError")
    raised = run_code("print('before')\nraise ValueError('no')", ns)
    assert raised.output == "before\n" and raised.error.startswith("error: ValueError: no")
    assert "python_exec" in raised.error and "_pyexec.py" not in raised.error
    with pytest.raises(KeyboardInterrupt):
        run_code("raise KeyboardInterrupt", ns)
    capped = run_code("print('y' * 1000)", ns, cap=100)
    assert capped.output.startswith("y" * 100) and "901 more characters" in capped.output


@pytest.mark.anyio
async def test_python_server_offers_exec_only_when_on_and_proposes_with_the_note():
    bench = Bench()
    python = PythonServer(bench)

    async def names():
        return [t.name for t in await python.list_tools()]

    assert "python_exec" not in (await names())
    refused = await python.call_tool("python_exec", {"code": "x = 1"})
    assert refused.is_error and "%ollie python on" in refused.text and "x" not in bench.ns
    python.agent_enables = True
    assert "python_exec" in (await names())
    python.override = False
    assert "python_exec" not in (await names())
    await python.call_tool("python_propose", {"code": "df.head()", "note": "look\nfirst"})
    assert bench.proposed == ["# look first\ndf.head()"]


def test_list_vars_is_bounded_and_skips_noise():
    import math

    ns = {"big": list(range(10**6)), "math": math, "f": len, "T": int, "_x": 1, "token": "t0k"}
    text = list_vars(ns)
    assert text.splitlines() == [
        "big (list): len 1000000: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, ...]",
        "token (str): (hidden: secret-looking name)",
    ]


@pytest.mark.anyio
async def test_a_script_core_takes_extra_servers_and_its_trusted_tools_decide(make_core):
    from ollie_nb.core import AgentConfig
    from ollie_nb.llm import OfflineBackend, ToolCall

    def model(messages, tools):
        last = messages[-1]
        if last.role == "tool":
            return "got " + last.content
        return [ToolCall("c1", "double", '{"n": 21}')]

    def double(n: int) -> int:
        return 2 * n

    server = NotebookToolServer()
    server.add(double)

    async def turn(config):
        core = await make_core(
            OfflineBackend(model),
            agent=config,
            extra_servers=lambda cfg: {"notebook": server},
            execute=False,
        )
        assert "notebook" in [s.name for s in core.list_servers().servers]
        return (await core.submit("go")).reply

    assert (await turn(AgentConfig())) == "got 42"
    denied = await turn(AgentConfig(trusted_tools=("reasoning_*",)))
    assert "not in trustedTools and was not approved" in denied
    assert (await turn(AgentConfig(trusted_tools=("notebook/*",)))) == "got 42"


def test_many_small_prints_stay_capped_for_the_whole_run():
    """The cap is per run, not per write: a loop of prints keeps the first 100 characters."""
    total = sum(len(f"{i}\n") for i in range(5000))
    run = run_code("for i in range(5000):\n    print(i)", {}, cap=100)
    kept, cut = run.output.split("\n[... ")
    assert kept == "".join(f"{i}\n" for i in range(5000))[:100]
    assert cut == f"{total - 100} more characters of output cut]"
    writer = BoundedWriter(100)
    for i in range(5000):
        writer.write(f"{i}\n")
    assert writer.kept == 100 + REDACT_MARGIN  # held while the code runs: the cap and a margin
