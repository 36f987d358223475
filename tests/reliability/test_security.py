"""Security: the API key never shows; sessions are private; the HTTP task server is loopback
only; a tool outside trustedTools never runs unapproved."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ollie_nb.core import AgentConfig, Notice, Retrying, ToolFinished
from ollie_nb.llm import OfflineBackend, ToolCall, make_backend
from tests.reliability.test_llm_faults import _openai_text
from tests.support.absent import skip_or_fail
from tests.support.agents import FIXTURES, assert_consistent, kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.llm_fake_provider import FAKE_KEY, Reply, json_reply
from tests.support.waits import wait_until

ECHO = {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}"}}


def assert_no_key(*texts: object) -> None:
    for text in texts:
        assert FAKE_KEY not in str(text), f"the key leaked: {str(text)[:300]}"
        assert FAKE_KEY[:12] not in str(text)


# -- the API key ------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_key_never_appears_in_events_history_sessions_reprs_or_logs(
    make_core, provider, tmp_path, monkeypatch, caplog
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OLLIE_OPENAI_URL", provider.url + "/v1")
    caplog.set_level(logging.DEBUG)
    limited = json_reply(
        429, {"error": {"message": f"slow down, {FAKE_KEY}"}}, {"Retry-After": "0"}
    )
    provider.queue(
        json_reply(401, ECHO),
        json_reply(500, {"error": {"message": f"upstream rejected key {FAKE_KEY}"}}),
        limited,
        Reply(chunks=_openai_text("Hello", " there"), reset_after=2),
        Reply(chunks=_openai_text("fine")),
    )
    backend = make_backend("openai")
    assert backend._api_key == FAKE_KEY  # the key really came from the environment
    core = await make_core(backend, autosave=True, start=False)

    async def scenario():
        out = []
        async with core:
            for prompt in ("one", "two", "three", "four"):
                events: list = []
                out.append((await core.submit(prompt, events.append), events))
            return out, repr(core), repr(core.servers), core.list_servers(), core.system_prompt()

    turns, *views = await scenario()
    errors = [
        e.text
        for _, events in turns
        for e in events
        if isinstance(e, Notice) and e.level == "error"
    ]
    assert errors[0] == "openai: HTTP 401: Incorrect API key provided: ***"
    assert errors[1] == "openai: HTTP 500: upstream rejected key ***"
    assert errors[2].startswith("openai: connection lost while streaming from")
    retries = [e for _, events in turns for e in events if isinstance(e, Retrying)]
    assert retries and "slow down, ***" in retries[0].reason
    assert turns[-1][0].reply == "fine"
    for result, events in turns:
        assert_no_key(result, *events)  # each event's repr shows every field
    assert_no_key(*[json.dumps(m.to_dict()) for m in core.session.history], *views, repr(backend))
    session = core.session.save()
    assert_no_key(session.read_text())
    formatter = logging.Formatter("%(message)s %(exc_info)s")
    assert_no_key(*[formatter.format(r) for r in caplog.records])
    assert_consistent(core.session.history)


@pytest.mark.anyio
async def test_the_key_never_appears_in_execute_code_output(make_core, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    turns = [
        [ToolCall("env", "execute_code", json.dumps({"code": "env; echo $OPENAI_API_KEY >&2"}))],
        "done",
    ]
    core = await make_core(
        OfflineBackend(turns=turns), approve=lambda n, a: True, autosave=True, start=False
    )

    async def scenario():
        async with core:
            events: list = []
            await core.submit("show the environment", events.append)
            return events

    events = await scenario()
    (output,) = [e.result for e in events if isinstance(e, ToolFinished)]
    assert output.startswith("exit code 0\n")
    assert "PATH=" in output  # the environment was listed, without the secret-named variable
    assert "OPENAI_API_KEY" not in output
    assert_no_key(
        output, *[m.content for m in core.session.history], core.session.save().read_text()
    )


@pytest.fixture(scope="module")
def key_provider():
    from tests.support.llm_fake_provider import FakeProvider

    server = FakeProvider()
    server.start()
    yield server
    server.stop()


@pytest.mark.slow
def test_the_key_never_appears_in_a_real_kernel(tmp_path, key_provider):
    env = kernel_env(tmp_path)
    env.update(
        OLLIE_BACKEND="openai",
        OPENAI_API_KEY=FAKE_KEY,
        OLLIE_OPENAI_URL=key_provider.url + "/v1",
    )
    key_provider.queue(json_reply(401, ECHO), json_reply(401, ECHO))
    kernel = Kernel(str(tmp_path), env)
    try:
        cells = [
            "import logging; logging.basicConfig(level=logging.DEBUG, force=True)",
            "%load_ext ollie_nb",
            "%ollie status",
            "%ollie backend",
            "%%ollie\nhello",
            "%ollie models",
            "%ollie history",
            "%ollie mcp",
            "import ollie_nb\nh = ollie_nb.agent()\nprint(repr(h), repr(h.core), repr(h.core.backend))\nh",
            "%ollie save",
        ]
        runs = [kernel.run(cell) for cell in cells]
    finally:
        kernel.shutdown()
    shown = [(r.outputs, r.error) for r in runs]
    assert_no_key(*shown)
    assert "HTTP 401: Incorrect API key provided: ***" in runs[4].text() + runs[4].stderr()
    # %ollie models: one line naming the provider, and what to check
    assert "✖ the chat provider failed: openai: HTTP 401" in runs[5].text()
    assert "check the backend's API key" in runs[5].text()
    assert "UsageError" not in runs[5].stderr()
    assert "backend: openai, model gpt-4o-mini" in runs[3].text()
    assert "<ollie agent 'default': openai/gpt-4o-mini" in runs[8].text()
    assert "key=set" in runs[8].text()
    sessions = list((tmp_path / "data" / "sessions").glob("*.json"))
    assert sessions and all(FAKE_KEY not in p.read_text() for p in sessions)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in sessions)


# -- session files ------------------------------------------------------------------


@pytest.mark.anyio
async def test_session_files_are_0600_whatever_the_umask_and_the_old_mode(make_core, tmp_path):
    core = await make_core(
        OfflineBackend(turns=["one", "two", "summary"]), autosave=True, start=False
    )
    old = os.umask(0)
    try:

        async def scenario():
            async with core:
                await core.submit("a")
                first = core.session.save()
                first.chmod(0o644)  # e.g. copied in by hand
                await core.submit("b")  # autosave rewrites it
                second = core.session.save()
                core.session.rename("private")
                await core.session.compact()
                return first, second

        first, second = await scenario()
    finally:
        os.umask(old)
    assert first == second
    assert stat.S_IMODE(second.stat().st_mode) == 0o600
    leftovers = [p.name for p in second.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temporary file left behind, world-readable or not


# -- the HTTP task server ---------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listeners(port: int) -> list[str]:
    """Local addresses (hex, as /proc shows them) of sockets listening on `port`."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.append(address)
    return found


def _outward_address() -> str | None:
    """This machine's address on its default route (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


TASKS_HTTP = [sys.executable, "-m", "ollie_nb.tasks", "serve", "--http"]


@pytest.mark.slow
def test_http_task_server_listens_on_loopback_only(tmp_path):
    port = _free_port()
    proc = subprocess.Popen(
        [*TASKS_HTTP, "--port", str(port), "--db", str(tmp_path / "tasks.db")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:

        def listens() -> bool:
            assert proc.poll() is None, proc.stderr.read().decode()
            return bool(_listeners(port))

        wait_until(listens, 20, "the task server to listen")
        assert _listeners(port) == ["0100007F"]  # 127.0.0.1, and no IPv6 or wildcard socket
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        outward = _outward_address()
        if outward is None:
            skip_or_fail("this machine has no outward address to try the port on")
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((outward, port), timeout=5).close()
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stderr.close()


# -- trustedTools -----------------------------------------------------------------


def marker_agent(trusted: list[str]) -> AgentConfig:
    return AgentConfig.from_dict(
        {
            "trustedTools": trusted,
            "mcpServers": {
                "markers": {"command": sys.executable, "args": [str(FIXTURES / "marker_server.py")]}
            },
        }
    )


async def _never(name, args):
    return False


def _raises(name, args):
    raise RuntimeError("approval UI crashed")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("trusted", "approve"),
    [
        ([], None),
        ([], lambda name, args: False),
        ([], _never),
        ([], _raises),
        (["execute", "touch ", "TOUCH", "reasoning", "markers", "execute_code?", "*__*"], None),
    ],
    ids=[
        "no-approver",
        "approver-says-no",
        "async-approver-says-no",
        "approver-raises",
        "near-misses",
    ],
)
@pytest.mark.anyio
async def test_untrusted_tools_never_run_unapproved(make_core, tmp_path, trusted, approve):
    markers = {name: tmp_path / f"{name}.ran" for name in ("execute", "touch", "reasoning")}
    calls = [
        ToolCall("e", "execute_code", json.dumps({"code": f"touch {markers['execute']}"})),
        ToolCall("t", "touch", json.dumps({"path": str(markers["touch"])})),
        # an MCP tool named like the built-in reasoning tools is still an MCP tool
        ToolCall("r", "reasoning_notes", json.dumps({"path": str(markers["reasoning"])})),
        ToolCall("think", "reasoning_think", json.dumps({"thought": "built-ins need no trust"})),
    ]
    core = await make_core(
        OfflineBackend(turns=[calls, "done"]),
        agent=marker_agent(trusted),
        approve=approve,
        autosave=True,
        start=False,
    )

    async def scenario():
        async with core:
            events: list = []
            await core.submit("go", events.append)
            return events

    events = await scenario()
    results = {e.id: e.result for e in events if isinstance(e, ToolFinished)}
    for call_id, name in (("e", "execute_code"), ("t", "touch"), ("r", "reasoning_notes")):
        assert results[call_id] == (
            f"error: {name} is not in trustedTools and was not approved; it did not run"
        )
    assert results["think"] == "ok"  # each call's result came after its tool had run (or not)
    assert [m for m in markers.values() if m.exists()] == []
    if approve is _raises:
        notices = [e.text for e in events if isinstance(e, Notice)]
        assert any("approval callback failed: RuntimeError" in text for text in notices)
    assert_consistent(core.session.history)


@pytest.mark.slow
@pytest.mark.anyio
async def test_trusted_patterns_do_let_tools_run(make_core, tmp_path):
    # the positive control: the same calls run when trusted, so the test above can see a run
    marker = tmp_path / "touch.ran"
    calls = [
        ToolCall("t", "touch", json.dumps({"path": str(marker)})),
        ToolCall("r", "reasoning_notes", json.dumps({"path": str(tmp_path / "r.ran")})),
    ]
    core = await make_core(
        OfflineBackend(turns=[calls, "done"]),
        agent=marker_agent(["tou*", "markers/reasoning_notes"]),
        autosave=True,
        start=False,
    )

    async with core:
        await core.submit("go")
    assert marker.exists() and (tmp_path / "r.ran").exists()


KERNEL_SETUP = """
import json
from ollie_nb.llm import OfflineBackend, ToolCall

def model(messages, tools):
    last = messages[-1]
    if last.role == "tool":
        return "tool said: " + last.content
    path = last.content.split()[-1]
    return [ToolCall("x", "execute_code", json.dumps({"code": f"touch {path}"}))]

scripted = OfflineBackend(model)
"""


@pytest.mark.slow
def test_approval_deny_and_ask_without_stdin_in_a_real_kernel(tmp_path):
    agent = tmp_path / "strict.json"
    agent.write_text(json.dumps({"trustedTools": ["reasoning_*"]}))
    kernel = Kernel(str(tmp_path), kernel_env(tmp_path))
    try:
        assert kernel.run("%load_ext ollie_nb").error is None
        assert kernel.run(textwrap.dedent(KERNEL_SETUP)).error is None
        kernel.run("%ollie backend scripted")
        assert "agent: strict" in kernel.run(f"%ollie agent {agent}").text()
        outcomes = {}
        for mode in ("deny", "ask", "allow"):
            kernel.run(f"%config OllieMagics.approval = '{mode}'")
            marker = tmp_path / f"{mode}.ran"
            run = kernel.run(f"%%ollie\nrun touch {marker}")
            assert run.error is None and "Traceback" not in run.stderr()  # the tool has ended
            outcomes[mode] = (marker.exists(), run.text())
    finally:
        kernel.shutdown()
    for mode in ("deny", "ask"):  # ask: no stdin to answer on, so no
        ran, text = outcomes[mode]
        assert not ran, f"approval={mode!r} let the tool run"
        assert "execute_code is not in trustedTools and was not approved; it did not run" in text
    assert outcomes["allow"][0]  # the positive control
