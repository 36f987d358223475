"""McpServer against real servers: a result of many items is joined only up to the cap, a
2025-protocol server's subscription gives signals, and a crash quotes what stderr said."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from ollie_nb.tools import DEFAULT_RESULT_CAP, Dispatcher, McpServer, cap_text
from ollie_nb.tools._bounds import cap_parts
from ollie_nb.tools._mcp import McpConnectError, stderr_quote

FIXTURES = Path(__file__).resolve().parents[1] / "support" / "fixtures"
TASKS = [sys.executable, "-m", "ollie_nb.tasks", "serve", "--db"]


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_result_of_many_items_is_joined_only_up_to_the_cap():
    """2,000 items of 10,000 characters (20 MB): McpServer itself keeps head and tail."""
    server = McpServer("big", command=sys.executable, args=[str(FIXTURES / "bounds_server.py")])

    async def run():
        try:
            direct = await server.call_tool("pieces", {"count": 2000, "size": 10_000})
            d = Dispatcher()
            d.add_server("big", server)
            return direct, await d.dispatch("big", "pieces", {"count": 2000, "size": 10_000})
        finally:
            await server.aclose()

    direct, dispatched = await run()
    total = 2000 * 10_000 + 1999
    assert len(direct.text) < DEFAULT_RESULT_CAP + 100
    assert direct.text.startswith("a" * 10_000 + "\n" + "b" * 10_000 + "\n")
    assert f"\n[... {total - DEFAULT_RESULT_CAP} characters cut of {total} ...]\n" in direct.text
    assert direct.text.endswith("\n" + "x" * 10_000)  # item 1999: 1999 % 26 = 23, x
    assert dispatched.text == direct.text  # the dispatcher does not cut it twice


@pytest.mark.parametrize(
    ("parts", "cap"),
    [(["ab", "cd", "ef"], 5), (["abcdef"], 3), (["a"] * 50, 7), (["", "", "xyz"], 2), ([], 4)],
)
def test_cap_parts_is_cap_text_of_the_join_and_cap_text_leaves_it_alone(parts, cap):
    joined = cap_text("\n".join(parts), cap)
    assert cap_parts(parts, cap) == joined
    assert cap_text(joined, cap) == joined


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_2025_protocol_server_is_subscribed_with_resources_subscribe(tmp_path):
    """ollie-tasks over the 2025 handshake: resources/subscribe, then a change made by
    another process (a second server on the same file) arrives as a signal."""
    db = str(tmp_path / "tasks.db")
    watcher = McpServer("tasks", command=TASKS[0], args=[*TASKS[1:], db], mode="legacy")
    writer = McpServer("writer", command=TASKS[0], args=[*TASKS[1:], db])

    async def run():
        try:
            await watcher.connect()
            assert watcher._client.protocol_version.startswith("2025")
            async with watcher.resource_updates("tasks://events") as signals:
                assert signals is not None
                created = await writer.call_tool("task_create", {"title": "Elsewhere"})
                signal = await asyncio.wait_for(signals.__anext__(), 10)
            after = await watcher.call_tool("task_create", {"title": "Unsubscribed"})
            return created, signal, after
        finally:
            await writer.aclose()
            await watcher.aclose()

    created, signal, after = await run()
    assert not created.is_error and not after.is_error
    assert str(signal.uri) == "tasks://events"
    assert watcher._signals.open_count("tasks://events") == 0  # the stream is closed


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_subscription_ends_with_an_error_when_the_session_dies(tmp_path):
    db = str(tmp_path / "tasks.db")
    watcher = McpServer("tasks", command=TASKS[0], args=[*TASKS[1:], db], mode="legacy")

    try:
        async with watcher.resource_updates("tasks://events") as signals:
            waiting = asyncio.ensure_future(signals.__anext__())
            await asyncio.sleep(0)
            watcher._closing.set()  # the session task ends, as when the server is gone
            with pytest.raises(RuntimeError, match="session ended"):
                await asyncio.wait_for(waiting, 10)
    finally:
        await watcher.aclose()


@pytest.mark.parametrize(
    ("tail", "quote"),
    [
        (
            "tasks server v1.2 starting\nTraceback (most recent call last):\n  File x\n"
            "ValueError: no config at /etc/x\nserver v1.2 stopped\n",
            "ValueError: no config at /etc/x | server v1.2 stopped",
        ),
        ("starting up\n\nlistening on stdio\n", "starting up | listening on stdio"),
        ("a\nb\nc\nd\n", "b | c | d"),
        ("", ""),
    ],
)
def test_stderr_quote_is_from_the_line_that_says_what_went_wrong(tail, quote):
    assert stderr_quote(tail) == quote


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_crash_after_a_banner_quotes_the_error_not_the_banner():
    script = (
        "import sys; print('Fancy Server v3 (c) 2026', file=sys.stderr); "
        "print('fatal: the API key is missing', file=sys.stderr); "
        "print('Fancy Server v3 exiting', file=sys.stderr); sys.exit(3)"
    )
    server = McpServer("fancy", command=sys.executable, args=["-c", script], connect_timeout=20)

    with pytest.raises(McpConnectError) as failed:
        await server.connect()
    message = str(failed.value)
    assert message.endswith(
        "(server stderr: fatal: the API key is missing | Fancy Server v3 exiting)"
    ), message


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_2025_protocol_server_without_subscribe_gives_no_signals():
    """bounds_server.py lists resources but serves no resources/subscribe: no stream."""
    server = McpServer(
        "plain", command=sys.executable, args=[str(FIXTURES / "bounds_server.py")], mode="legacy"
    )

    async def run():
        try:
            async with server.resource_updates("tasks://events") as signals:
                return signals, server._client.server_capabilities.resources
        finally:
            await server.aclose()

    signals, resources = await run()
    assert resources is not None and resources.subscribe is False
    assert signals is None
