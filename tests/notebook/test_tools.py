"""Notebook-defined tools and the python tools, in a real kernel with a scripted offline model.

The model is a function: a prompt `call NAME {json}` becomes that tool call, and the
tool's answer comes back as the reply `tool said: ...`, so every check reads what the
model really got.
"""

from __future__ import annotations

import json
import textwrap
import threading
import time

import pytest

from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.waits import wait_until

SETUP = """
import json, time
from typing import Literal, Optional
from pydantic import BaseModel
import ollie_nb
from ollie_nb.llm import OfflineBackend, ToolCall

def script(messages, tools):
    last = messages[-1]
    if last.role == "tool":
        return "tool said: " + last.content
    _, name, args = last.content.split(" ", 2)
    return [ToolCall("c1", name, args)]

ollie_nb.use_backend(OfflineBackend(script))

def ask(tool_name, /, **args):
    return ollie_nb.agent().ask(f"call {tool_name} {json.dumps(args)}", show=False)
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbtools")
    k = Kernel(str(base), kernel_env(base))
    k.base = base
    assert k.run("%load_ext ollie_nb").error is None
    run = k.run(textwrap.dedent(SETUP))
    assert run.error is None, run.error
    yield k
    k.shutdown()


def value(kernel: Kernel, code: str) -> str:
    """The text the cell's last expression printed (print(...) of it)."""
    run = kernel.run(f"print({code})")
    assert run.error is None, run.error
    return run.text().strip()


def test_schema_comes_from_the_type_hints(kernel):
    code = '''
    class Point(BaseModel):
        x: int
        y: int = 0

    @ollie_nb.tool
    def typed(name: str, count: int, ratio: float, flag: bool, tags: list[str],
              note: Optional[str] = None, mode: Literal["fast", "slow"] = "fast",
              at: Point | None = None) -> str:
        """Echo the arguments.

        Used by the tests."""
        return f"{name} {count} {ratio} {flag} {tags} {note} {mode} {at}"
    '''
    assert kernel.run(textwrap.dedent(code)).error is None
    schema = json.loads(
        value(
            kernel,
            "json.dumps(next(t.input_schema for t in ollie_nb.agent().core.tools "
            "if t.name == 'typed'))",
        )
    )
    props = schema["properties"]
    assert [props[k]["type"] for k in ("name", "count", "ratio", "flag", "tags")] == [
        "string",
        "integer",
        "number",
        "boolean",
        "array",
    ]
    assert props["tags"]["items"] == {"type": "string"}
    assert {"type": "null"} in props["note"]["anyOf"]
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert schema["$defs"]["Point"]["required"] == ["x"]
    assert sorted(schema["required"]) == ["count", "flag", "name", "ratio", "tags"]
    description = value(
        kernel, "next(t.description for t in ollie_nb.agent().core.tools if t.name == 'typed')"
    )
    assert description.startswith("Echo the arguments.")
    reply = value(
        kernel, 'ask("typed", name="a", count=2, ratio=0.5, flag=True, tags=["t"], at={"x": 3})'
    )
    assert reply == "tool said: a 2 0.5 True ['t'] None fast x=3 y=0"
    assert value(kernel, 'typed("b", 1, 1.0, False, [])') == "b 1 1.0 False [] None fast None"
    servers = kernel.run("%ollie mcp").text()
    assert "notebook" in servers and "typed" in servers and "python_vars" in servers


def test_bad_arguments_and_a_raising_tool_give_errors_and_the_turn_goes_on(kernel):
    code = '''
    @ollie_nb.tool(name="div")
    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        return a / b
    '''
    assert kernel.run(textwrap.dedent(code)).error is None
    bad = value(kernel, 'ask("div", a="x")')
    assert bad.startswith("tool said: error: bad arguments for div:")
    assert "a: Input should be a valid integer" in bad and "b: Field required" in bad
    raised = value(kernel, 'ask("div", a=1, b=0)')
    assert raised == "tool said: error: ZeroDivisionError: division by zero"
    assert value(kernel, 'ask("div", a=6, b=3)') == "tool said: 2.0"


def test_redefining_replaces_the_tool_and_remove_tool_drops_it(kernel):
    kernel.run("@ollie_nb.tool\ndef version() -> int:\n    return 1")
    assert value(kernel, 'ask("version")') == "tool said: 1"
    kernel.run("@ollie_nb.tool\ndef version() -> int:\n    return 2")
    assert value(kernel, 'ask("version")') == "tool said: 2"
    assert value(kernel, 'ollie_nb.remove_tool("version")') == "True"
    names = value(kernel, "[t.name for t in ollie_nb.agent().core.tools]")
    assert "'version'" not in names
    assert "unknown tool 'version'" in value(kernel, 'ask("version")')


def test_async_tools_run_on_the_agent_loop_and_sync_ones_on_the_kernel_thread(kernel):
    code = '''
    import threading

    @ollie_nb.tool
    async def where() -> str:
        """Say which thread runs this, and register a tool on the way."""
        ollie_nb.add_tool(lambda: "late", name="late")
        return threading.current_thread().name
    '''
    assert kernel.run(textwrap.dedent(code)).error is None
    assert value(kernel, 'ask("where")') == "tool said: ollie-runtime"
    assert value(kernel, 'ask("late")') == "tool said: late"
    kernel.run(
        "@ollie_nb.tool\ndef where_sync() -> str:\n    return threading.current_thread().name"
    )
    assert value(kernel, 'ask("where_sync")') == "tool said: MainThread"  # the kernel thread


def test_an_untrusted_tool_asks_and_a_denied_call_does_not_run(kernel):
    code = """
    calls = []
    @ollie_nb.tool(trusted=False)
    def record(x: int) -> str:
        calls.append(x)
        return "recorded"
    """
    kernel.run(textwrap.dedent(code))
    kernel.run("%config OllieMagics.approval = 'deny'")
    assert "was not approved; it did not run" in value(kernel, 'ask("record", x=1)')
    kernel.run("%config OllieMagics.approval = 'allow'")
    assert value(kernel, 'ask("record", x=2)') == "tool said: recorded"
    assert value(kernel, "calls") == "[2]"
    kernel.run("%config OllieMagics.approval = 'ask'")


def test_ctrl_c_interrupts_a_sync_tool_and_the_agent_survives(kernel, tmp_path):
    started = tmp_path / "slow-started"
    code = f'''
    @ollie_nb.tool
    def slow(seconds: float) -> str:
        """Sleep."""
        open({str(started)!r}, "w").close()  # the test waits on it, not on a fixed time
        time.sleep(seconds)  # the slow tool itself
        return "woke"
    '''
    kernel.run(textwrap.dedent(code))
    seen = []

    def watch(kind, content):
        if "running `slow`" in str(content):
            seen.append(time.monotonic())

    result = {}
    worker = threading.Thread(
        target=lambda: result.setdefault(
            "run", kernel.run('%%ollie\ncall slow {"seconds": 30}', timeout=40, on_message=watch)
        )
    )
    worker.start()
    wait_until(lambda: seen and started.exists(), 20, "the slow tool to be sleeping")
    interrupted_at = time.monotonic()
    kernel.interrupt()
    worker.join(10)
    assert not worker.is_alive()
    ended = time.monotonic() - interrupted_at
    assert ended < 3.0, f"the cell took {ended:.2f} s to end after Ctrl-C"
    run = result["run"]
    assert run.error is None, run.error
    assert any("interrupted" in t for t in run.texts())
    assert value(kernel, 'ask("slow", seconds=0)') == "tool said: woke"


def test_python_exec_is_off_then_asks_and_runs_only_when_approved(kernel):
    kernel.run("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})")
    assert "unknown tool 'python_exec'" in value(kernel, 'ask("python_exec", code="x = 1")')
    assert "python_exec: on" in kernel.run("%ollie python on").text()
    kernel.run("%config OllieMagics.approval = 'deny'")
    denied = value(kernel, 'ask("python_exec", code="df[\'b\'] = df.a * 2")')
    assert "was not approved; it did not run" in denied
    assert value(kernel, "list(df.columns)") == "['a']"
    kernel.run("%config OllieMagics.approval = 'allow'")
    run = kernel.run("r = ask(\"python_exec\", code=\"df['b'] = df.a * 2\\nprint('made b')\\ndf\")")
    assert run.error is None, run.error
    reply = value(kernel, "r")
    assert reply.startswith("tool said: made b") and "value:" in reply
    assert value(kernel, "df.b.tolist()") == "[2, 4, 6]"
    failed = value(kernel, 'ask("python_exec", code="1/0")')
    assert "error: ZeroDivisionError: division by zero" in failed and "Traceback" in failed
    kernel.run("%config OllieMagics.approval = 'ask'")
    assert "python_exec: off" in kernel.run("%ollie python off").text()


def test_the_value_python_exec_shows_comes_under_the_calls_line(kernel):
    kernel.run("import pandas as pd\nframe = pd.DataFrame({'a': [1, 2, 3]})")
    kernel.run("%ollie python on")
    kernel.run("%config OllieMagics.approval = 'allow'")
    run = kernel.run('%%ollie\ncall python_exec {"code": "frame"}')
    assert run.error is None, run.error
    html = [o.get("data", {}).get("text/html", "") for o in run.outputs]
    line = next(i for i, o in enumerate(run.outputs) if "→ python_exec" in str(o.get("data")))
    tables = [i for i, text in enumerate(html) if "<table" in text and "dataframe" in text]
    assert len(tables) == 1 and tables[0] > line  # shown once, under the line
    kernel.run("%config OllieMagics.approval = 'ask'")
    kernel.run("%ollie python off")


def test_python_exec_output_is_capped(kernel):
    kernel.run("%ollie python on")
    kernel.run("%config OllieMagics.approval = 'allow'")
    reply = value(kernel, "len(ask('python_exec', code='print(\"x\" * 500_000)'))")
    assert int(reply) < 25_000
    cut = value(kernel, "ask('python_exec', code='print(\"x\" * 500_000)')[-80:]")
    assert "more characters of output cut" in cut
    kernel.run("%config OllieMagics.approval = 'ask'")
    kernel.run("%ollie python off")


def test_python_vars_summarises_and_hides_secret_looking_names(kernel):
    code = """
    import pandas as pd
    sales = pd.DataFrame({"region": ["n", "s"], "amount": [3, 4]})
    numbers = list(range(1000))
    api_key = "sk-live-0123456789abcdef"
    db_password = {"value": "hunter2-secret"}
    _private = "not listed"
    """
    kernel.run(textwrap.dedent(code))
    listing = value(kernel, 'ask("python_vars")')
    assert "sales (DataFrame): shape (2, 2), columns [region, amount]" in listing
    assert "numbers (list): len 1000: [0, 1, 2" in listing
    assert "api_key (str): (hidden: secret-looking name)" in listing
    assert "db_password (dict): (hidden: secret-looking name)" in listing
    assert "sk-live" not in listing and "hunter2" not in listing
    assert "_private" not in listing and "pd (" not in listing and "script (" not in listing


def test_python_last_error_and_propose(kernel):
    failing = kernel.run("def broken():\n    raise KeyError('missing-key')\nbroken()")
    assert failing.error is not None
    last = value(kernel, 'ask("python_last_error")')
    assert "error: KeyError: 'missing-key'" in last and "in broken" in last
    run = kernel.run('r = ask("python_propose", code="df.describe()", note="summary stats")')
    assert run.error is None, run.error
    payloads = kernel.reply(run)["payload"]
    assert {
        "source": "set_next_input",
        "text": "# summary stats\ndf.describe()",
        "replace": False,
    }.items() <= payloads[0].items()
    assert "new cell below" in value(kernel, "r")
