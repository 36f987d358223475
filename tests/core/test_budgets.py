"""Spend caps through real provider wire formats: a request past a cap is never sent.

The fake provider replays OpenAI's and Anthropic's streams and counts the requests it gets;
prices come from the genai-prices table for the model in use (neither stream reports money).
"""

from __future__ import annotations

import json

import pytest

from ollie_nb.core import AgentConfig, AgentCore, Notice
from ollie_nb.core._budget import BudgetExceededError, Budgets, CapKind, Caps, env_budgets
from ollie_nb.llm import AnthropicBackend, OfflineBackend, OpenAIBackend, RetryPolicy
from tests.llm import test_anthropic as anthropic_wire
from tests.llm import test_openai as openai_wire
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)
CAP = 0.0001  # dollars: the first response of each wire below costs more


def openai_call(provider: FakeProvider) -> tuple[OpenAIBackend, list[bytes], list[bytes]]:
    """gpt-4o-mini answering with a tool call that used 2,000 prompt tokens ($0.0003)."""
    usage = openai_wire.chunk(None, usage={"prompt_tokens": 2000, "completion_tokens": 20})
    call = [
        openai_wire.call_delta(0, "", "call_1", "no_such_tool"),
        openai_wire.call_delta(0, json.dumps({})),
        openai_wire.chunk({}, "tool_calls"),
        usage,
        openai_wire.DONE,
    ]
    text = [openai_wire.chunk({"content": "done"}), openai_wire.chunk({}, "stop"), usage]
    backend = OpenAIBackend("gpt-4o-mini", base_url=provider.url + "/v1", api_key=FAKE_KEY)
    return backend, call, [*text, openai_wire.DONE]


def anthropic_call(provider: FakeProvider) -> tuple[AnthropicBackend, list[bytes], list[bytes]]:
    """claude-sonnet-4-6 answering with a tool call after 472 input tokens ($0.0014)."""
    call = [
        anthropic_wire.MESSAGE_START,
        *anthropic_wire.tool_block(0, "call_1", "no_such_tool", "{}"),
        *anthropic_wire.finish("tool_use", 5),
    ]
    text = [
        anthropic_wire.MESSAGE_START,
        *anthropic_wire.text_block(0, "done"),
        *anthropic_wire.finish("end_turn", 5),
    ]
    backend = AnthropicBackend("claude-sonnet-4-6", api_key=FAKE_KEY, base_url=provider.url)
    return backend, call, text


async def run(core: AgentCore, prompt: str) -> tuple[object, list]:
    events: list = []
    return await core.submit(prompt, events.append), events


@pytest.mark.parametrize("make", [openai_call, anthropic_call], ids=["openai", "anthropic"])
@pytest.mark.anyio
async def test_a_request_past_the_session_cost_cap_is_not_sent(make_core, provider, make):
    backend, call, text = make(provider)
    backend._retry = FAST
    provider.queue(Reply(chunks=call), Reply(chunks=text))
    config = AgentConfig.from_dict({"maxSessionCost": CAP})
    core = await make_core(backend, agent=config)
    result, events = await run(core, "go")

    assert len(provider.requests) == 1  # the tool round's next request was refused
    assert result.capped and not result.reply
    lines = [e.text for e in events if isinstance(e, Notice) and e.level == "error"]
    assert len(lines) == 1
    assert lines[0].startswith("the session's cost cap $0.0001 is reached: $0.0")
    assert "the model request was not sent" in lines[0]
    assert result.error == lines[0]
    assert (
        core.session.usage.cost is not None and core.session.usage.cost > CAP
    )  # priced by the table
    assert core.spend.session.spend.cost == pytest.approx(core.session.usage.cost)


@pytest.mark.anyio
async def test_the_environment_cap_is_read_as_ollie_reads_it(make_core, provider, monkeypatch):
    backend, call, text = openai_call(provider)
    provider.queue(Reply(chunks=call), Reply(chunks=text))
    monkeypatch.setenv("OLLIE_MAX_SESSION_COST", "0.0001")
    core = await make_core(backend)
    result, _ = await run(core, "go")
    assert len(provider.requests) == 1
    assert "the session's cost cap $0.0001 is reached" in result.error


@pytest.mark.parametrize("raw", ["", "0", "-1", "lots"])
def test_an_environment_cap_that_is_no_number_above_0_is_no_cap(raw):
    assert env_budgets({"OLLIE_MAX_SESSION_COST": raw}).session == Caps()


@pytest.mark.anyio
async def test_session_token_cap_stops_the_offline_model(make_core):
    turns = [[{"name": "no_such_tool", "arguments": {}}], "never"]
    core = await make_core(OfflineBackend(turns=turns), start=False)
    core.user_budgets = Budgets(session=Caps(tokens=1))
    await core.start()
    result, events = await run(core, "go")
    assert core.session.usage.requests == 1
    assert result.capped
    assert result.error.startswith("the session's token cap 1 is reached: ")
    assert "tokens used so far ($0.0000)" in result.error  # the local model costs $0
    assert [e for e in events if isinstance(e, Notice) and e.level == "error"]


@pytest.mark.anyio
async def test_the_lowest_cap_of_file_environment_and_frontend_binds(make_core, monkeypatch):
    monkeypatch.setenv("OLLIE_MAX_SESSION_COST", "2")
    config = AgentConfig.from_dict({"maxSessionCost": 5, "maxPlanTokens": 900})
    core = await make_core(agent=config, start=False)
    core.config = config
    core.user_budgets = Budgets(plan=Caps(tokens=1000), subagent=Caps(cost=0.5))
    assert core.budgets() == Budgets(Caps(2.0), Caps(tokens=900), Caps(cost=0.5))


def test_a_cap_is_reached_at_the_spend_not_only_past_it():
    from ollie_nb.planning import Spend

    assert Caps(tokens=10).reached(Spend(10)) is CapKind.TOKENS
    assert Caps(cost=0.5).reached(Spend(3, 0.5)) is CapKind.COST
    assert Caps(cost=0.5, tokens=10).reached(Spend(9, 0.49)) is None
    assert Caps(cost=0.5).reached(Spend(3, 0.0, unpriced=4)) is None  # no price: no cost cap


def test_budget_error_is_a_usage_error_under_the_root():
    from ollie_nb.errors import OllieUsageError

    assert issubclass(BudgetExceededError, OllieUsageError)
