"""The tool calls of one response run together: through the fake OpenAI provider's real wire
format and the real stdio sleep server (bench/sleep_server.py).

Overlap is read from the order of the tool events (every start before any end), never
from wall time; approvals come first, in call order; results join the history in call
order; a tool that must run alone (sequentialTools, MCP's destructiveHint, a notebook
tool's `sequential`) does not overlap; an interruption answers every call.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from ollie_nb.core import AgentConfig, AgentCore, ToolCalled, ToolFinished
from ollie_nb.llm import OpenAIBackend, RetryPolicy
from ollie_nb.tools import NotebookToolServer
from tests.conftest import MakeCore
from tests.llm.test_openai import DONE, call_delta, chunk
from tests.support.agents import ROOT, assert_consistent
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply

SLEEP_SERVER = ROOT / "bench" / "sleep_server.py"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)
CANCELLED = "error: cancelled: the user interrupted the turn before this call finished"


def calls_reply(*calls: tuple[str, str, dict[str, Any]]) -> Reply:
    """One streamed chat.completion whose message holds these (id, tool, args) calls."""
    chunks = [chunk({"role": "assistant", "content": None})]
    for n, (call_id, name, _) in enumerate(calls):
        chunks.append(call_delta(n, "", call_id, name))
    for n, (_, _, args) in enumerate(calls):
        chunks.append(call_delta(n, json.dumps(args)))
    return Reply(chunks=[*chunks, chunk({}, "tool_calls"), DONE])


def text_reply(text: str) -> Reply:
    return Reply(chunks=[chunk({"role": "assistant", "content": text}), chunk({}, "stop"), DONE])


def sleep_agent(**extra: Any) -> AgentConfig:
    server = {"command": sys.executable, "args": [str(SLEEP_SERVER)], "timeout": 30.0}
    return AgentConfig.from_dict(
        {"mcpServers": {"sleep": server}, "trustedTools": ["sleep/*"], **extra}
    )


async def sleep_core(make_core: MakeCore, provider: FakeProvider, **kwargs: Any) -> AgentCore:
    backend = OpenAIBackend("gpt-4o", base_url=provider.url + "/v1", api_key=FAKE_KEY, retry=FAST)
    kwargs.setdefault("agent", sleep_agent())
    return await make_core(backend, **kwargs)


async def run_turn(core: AgentCore, sink=None) -> list[Any]:
    """One turn; the tool events it emitted, as ("start"|"end", call id) in order."""
    order: list[Any] = []

    def record(event: Any) -> None:
        if isinstance(event, ToolCalled):
            order.append(("start", event.id))
        elif isinstance(event, ToolFinished):
            order.append(("end", event.id))
        if sink is not None:
            sink(event)

    await core.submit("go", record)
    return order


def tool_messages(body: dict) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.anyio
async def test_calls_of_one_response_overlap_and_join_in_call_order(make_core, provider):
    # c1 takes longest, so the calls end out of call order
    provider.queue(
        calls_reply(
            ("c1", "sleep", {"seconds": 0.8}),
            ("c2", "sleep", {"seconds": 0.1}),
            ("c3", "sleep", {"seconds": 0.4}),
        ),
        text_reply("All slept."),
    )
    core = await sleep_core(make_core, provider)
    order = await run_turn(core)
    assert [kind for kind, _ in order] == ["start"] * 3 + ["end"] * 3
    assert [i for kind, i in order if kind == "end"] == ["c2", "c3", "c1"]
    sent = provider.requests[1].body
    assert tool_messages(sent) == [("c1", "slept"), ("c2", "slept"), ("c3", "slept")]
    assert_consistent(core.session.history)


@pytest.mark.anyio
async def test_sequential_tools_pattern_runs_each_call_alone(make_core, provider):
    provider.queue(
        calls_reply(("c1", "sleep", {"seconds": 0.2}), ("c2", "sleep", {"seconds": 0.1})),
        text_reply("Done."),
    )
    core = await sleep_core(make_core, provider, agent=sleep_agent(sequentialTools=["sleep/sl*p"]))
    order = await run_turn(core)
    assert order == [("start", "c1"), ("end", "c1"), ("start", "c2"), ("end", "c2")]


@pytest.mark.anyio
async def test_destructive_tool_runs_alone_between_overlapping_neighbours(make_core, provider):
    provider.queue(
        calls_reply(
            ("a", "sleep", {"seconds": 0.3}),
            ("b", "sleep", {"seconds": 0.3}),
            ("c", "sleep_alone", {"seconds": 0.1}),
            ("d", "sleep", {"seconds": 0.1}),
        ),
        text_reply("Done."),
    )
    core = await sleep_core(make_core, provider)
    order = await run_turn(core)
    assert [kind for kind, _ in order[:2]] == ["start", "start"]  # a and b overlap
    assert {i for _, i in order[2:4]} == {"a", "b"}
    assert order[4:] == [("start", "c"), ("end", "c"), ("start", "d"), ("end", "d")]


@pytest.mark.anyio
async def test_approvals_are_asked_in_call_order_before_any_call_runs(make_core, provider):
    provider.queue(
        calls_reply(
            ("c1", "sleep", {"seconds": 0.1}),
            ("c2", "sleep", {"seconds": 0.2}),
            ("c3", "sleep", {"seconds": 0.3}),
        ),
        text_reply("Done."),
    )
    log: list[Any] = []

    async def approve(name: str, args: dict) -> bool:
        log.append(("asked", args["seconds"]))
        await asyncio.sleep(0.05)  # a person taking a moment: nothing may start meanwhile
        return args["seconds"] != 0.2

    core = await sleep_core(
        make_core, provider, agent=sleep_agent(trustedTools=[]), approve=approve
    )
    order = await run_turn(
        core, lambda e: isinstance(e, ToolCalled) and log.append(("start", e.id))
    )
    asked = [entry for entry in log if entry[0] == "asked"]
    assert asked == [("asked", 0.1), ("asked", 0.2), ("asked", 0.3)]
    ran = [n for n, entry in enumerate(log) if entry in (("start", "c1"), ("start", "c3"))]
    assert min(ran) > log.index(("asked", 0.3))  # nothing ran before the last answer
    assert order[:2] == [("start", "c2"), ("end", "c2")]  # the denied call, answered at once
    assert [k for k, _ in order[2:]] == ["start", "start", "end", "end"]
    results = dict(tool_messages(provider.requests[1].body))
    assert results["c1"] == results["c3"] == "slept"
    assert "was not approved" in results["c2"]


@pytest.mark.anyio
async def test_interrupt_stops_every_call_and_answers_each_in_order(make_core, provider):
    provider.queue(
        calls_reply(
            ("c1", "sleep", {"seconds": 0.1}),
            ("c2", "sleep", {"seconds": 10}),
            ("c3", "sleep", {"seconds": 10}),
            ("c4", "sleep", {"seconds": 0.2}),
        ),
        text_reply("Fine."),
    )
    core = await sleep_core(make_core, provider)
    ends: list[str] = []
    results: list[Any] = []

    loop = asyncio.get_running_loop()

    def sink(event: Any) -> None:
        if isinstance(event, ToolFinished):
            ends.append(event.id)
            if len(ends) == 2:
                loop.call_soon(core.interrupt)

    started = loop.time()
    results.append(await core.submit("go", sink))
    results.append(loop.time() - started)
    results.append(await core.submit("again"))
    first, seconds, second = results
    assert first.interrupted and seconds < 5  # the 10 s calls were stopped
    assert sorted(ends) == ["c1", "c4"]
    sent = provider.requests[1].body
    assert tool_messages(sent) == [
        ("c1", "slept"),
        ("c2", CANCELLED),
        ("c3", CANCELLED),
        ("c4", "slept"),
    ]
    assert second.reply == "Fine."
    assert_consistent(core.session.history)


@pytest.mark.anyio
async def test_sequential_notebook_tool_does_not_overlap(make_core, provider):
    tools = NotebookToolServer()

    async def fetch(n: int) -> str:
        """Fetch item n."""
        await asyncio.sleep(0.05 * (3 - n))
        return f"item {n}"

    async def write(n: int) -> str:
        """Write item n."""
        await asyncio.sleep(0.05 * (3 - n))
        return f"wrote {n}"

    tools.add(fetch)
    tools.add(write, sequential=True)
    provider.queue(
        calls_reply(("f1", "fetch", {"n": 1}), ("f2", "fetch", {"n": 2})),
        calls_reply(("w1", "write", {"n": 1}), ("w2", "write", {"n": 2})),
        text_reply("Done."),
    )
    core = await sleep_core(
        make_core, provider, agent=AgentConfig(), extra_servers=lambda config: {"notebook": tools}
    )
    order = await run_turn(core)
    assert [k for k, _ in order[:4]] == ["start", "start", "end", "end"]
    assert order[4:] == [("start", "w1"), ("end", "w1"), ("start", "w2"), ("end", "w2")]


@pytest.mark.anyio
async def test_at_most_eight_calls_run_at_once(make_core, provider):
    calls = [(f"c{n}", "sleep", {"seconds": 0.3}) for n in range(10)]
    provider.queue(calls_reply(*calls), text_reply("Done."))
    order = await run_turn(await sleep_core(make_core, provider))
    running, most = 0, 0
    for kind, _ in order:
        running += 1 if kind == "start" else -1
        most = max(most, running)
    assert most == 8 and len(order) == 20
