"""Every tool result is bounded before it enters the history, and execute_code never reads past its cap."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ollie_nb.tools import (
    DEFAULT_RESULT_CAP,
    Dispatcher,
    ExecuteServer,
    McpServer,
    ToolResult,
    cap_text,
)
from tests.support.agents import FIXTURES
from tests.support.processes import cancel_mid_start, wait_group_gone


class Echo:
    """A built-in-style server answering with `size` characters."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.seen: list[dict] = []

    async def list_tools(self):
        return []

    async def call_tool(self, name, args):
        self.seen.append(args)
        return ToolResult("a" * (self.size // 2) + "z" * (self.size - self.size // 2))

    async def aclose(self):
        return None


def test_cap_text_keeps_head_and_tail_and_says_how_much_was_cut():
    text = "H" * 60 + "M" * 880 + "T" * 60
    assert cap_text(text, 120) == "H" * 60 + "\n[... 880 characters cut of 1000 ...]\n" + "T" * 60
    assert cap_text(text, 1000) is text
    assert cap_text("abc", 0) == "abc"  # 0 means no cap


@pytest.mark.anyio
async def test_dispatch_caps_every_result_at_the_default_cap():
    d = Dispatcher()
    d.add_server("echo", Echo(5_000_000))
    result = await d.dispatch("echo", "big", {})
    assert DEFAULT_RESULT_CAP == 100_000
    half = DEFAULT_RESULT_CAP // 2
    cut = 5_000_000 - DEFAULT_RESULT_CAP
    assert result.text == (
        "a" * half + f"\n[... {cut} characters cut of 5000000 ...]\n" + "z" * half
    )
    assert not result.is_error


@pytest.mark.anyio
async def test_dispatcher_cap_is_a_constructor_argument_and_small_results_pass_unchanged():
    d = Dispatcher(result_cap=10)
    d.add_server("echo", Echo(8))
    small = await d.dispatch("echo", "t", {})
    d.result_cap = 4
    big = await d.dispatch("echo", "t", {})
    assert small.text == "aaaazzzz"
    assert big.text == "aa\n[... 4 characters cut of 8 ...]\nzz"


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_mcp_tool_result_of_20_mb_enters_the_history_capped():
    """A real stdio MCP server answering 20 MB: the dispatcher hands on 100,000 characters."""
    server = McpServer("big", command=sys.executable, args=[str(FIXTURES / "bounds_server.py")])

    async def run():
        d = Dispatcher()
        d.add_server("big", server)
        await server.connect()
        try:
            return await d.dispatch("big", "flood", {"size": 20_000_000})
        finally:
            await d.aclose()

    result = await run()
    head, marker, tail = result.text.split("\n")
    assert head == "h" * 50_000 and tail == "t" * 50_000
    assert marker == f"[... {20_000_000 - 100_000} characters cut of 20000000 ...]"


# Runs one execute_code call in a fresh interpreter and prints its result and peak RSS, so
# the figure is this call's own and not the peak of whatever the test process did before.
_MEASURE = """
import asyncio, json, resource, sys
from ollie_nb.tools import ExecuteServer
args = json.loads(sys.argv[1])
result = asyncio.run(ExecuteServer(sys.argv[2]).call_tool("execute_code", args))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"text": result.text, "is_error": result.is_error, "peak_mb": peak}))
"""


def _execute_in_fresh_process(args: dict, workdir: Path) -> dict:
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, json.dumps(args), str(workdir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.anyio
async def test_execute_code_stops_reading_at_its_cap_and_kills_the_writer(tmp_path):
    """`yes` writes forever: the result is the capped head and the process group is gone."""
    pid_file = tmp_path / "pid"
    server = ExecuteServer(str(tmp_path), output_cap=100_000)
    result = await server.call_tool(
        "execute_code", {"code": f"echo $$ > {pid_file}; yes", "timeout": 30}
    )
    first, rest = result.text.split("\n", 1)
    assert result.is_error
    assert first == "killed after 100000 bytes of output (output cap); the rest was not read"
    assert rest == "y\n" * 50_000
    _assert_group_gone(int(pid_file.read_text()))


@pytest.mark.slow
def test_execute_code_300_mb_of_output_does_not_grow_memory(tmp_path):
    """The issue's case: 300 MB written at once; the reading process's peak RSS stays flat."""
    baseline = _execute_in_fresh_process({"code": "echo hi"}, tmp_path)
    code = "import sys; sys.stdout.write('x' * 300_000_000)"
    flood = _execute_in_fresh_process({"language": "python", "code": code, "timeout": 60}, tmp_path)
    assert baseline["text"] == "exit code 0\nhi"
    assert flood["text"] == (
        "killed after 100000 bytes of output (output cap); the rest was not read\n" + "x" * 100_000
    )
    grown = flood["peak_mb"] - baseline["peak_mb"]
    assert grown < 20, f"reading 300 MB of output raised the peak RSS by {grown:.0f} MB"


@pytest.mark.anyio
async def test_execute_code_output_under_the_cap_is_whole(tmp_path):
    server = ExecuteServer(str(tmp_path), output_cap=1000)
    result = await server.call_tool("execute_code", {"code": "printf 'a%.0s' $(seq 1000); exit 3"})
    assert result == ToolResult("exit code 3\n" + "a" * 1000, is_error=True)


@pytest.mark.anyio
async def test_execute_code_timeout_still_kills_the_group(tmp_path):
    pid_file = tmp_path / "pid"
    server = ExecuteServer(str(tmp_path))
    code = f"echo $$ > {pid_file}; sleep 30 & sleep 30"
    result = await server.call_tool("execute_code", {"code": code, "timeout": 0.5})
    assert result == ToolResult("error: killed after 0.5 s (timeout)", is_error=True)
    _assert_group_gone(int(pid_file.read_text()))


def _assert_group_gone(pgid: int) -> None:
    left = wait_group_gone(pgid)
    assert not left, f"process group {pgid} still has {left}"


@pytest.mark.anyio
async def test_execute_code_cancelled_while_it_starts_kills_the_whole_group(tmp_path):
    """Ctrl-C can land after the shell started but before its pipes connected (a busy
    loop): the command the shell already forked must die with it, not only the shell,
    and the cancelled call must end at once (asyncio's own clean-up waits for the pipes
    the orphan holds: 30 s here)."""
    pid_file = tmp_path / "pid"
    server = ExecuteServer(str(tmp_path))
    code = f"sleep 30 & echo $$ > {pid_file}; wait"  # the sleep is forked before the echo
    call = server.call_tool("execute_code", {"code": code})
    _assert_group_gone(await cancel_mid_start(call, "bash", pid_file))
