"""A sub-agent that works several steps of a plan starts each from what the step needs (the
goal, the step, what its blockers reported), not from the earlier steps' turns."""

from __future__ import annotations

import json

import pytest

from ollie_nb.llm import OpenAIBackend, RetryPolicy
from ollie_nb.llm._offline import is_step_prompt
from ollie_nb.planning import StepState, read_step
from tests.llm import test_openai as openai_wire
from tests.support.llm_fake_provider import FAKE_KEY, Recorded, Reply

STEPS = 12
CHAIN = "Write the guide\n" + "\n".join(f"- Chapter {i}" for i in range(1, STEPS + 1))


def answer(request: Recorded) -> Reply:
    """The provider's reply to a step: a few lines saying what was done."""
    step = read_step(request.body["messages"][-1]["content"])
    assert step is not None
    text = f"Wrote {step.title}.\n" + "It covers the topic in six sections. " * 8
    chunk = openai_wire.chunk
    done = [chunk({"role": "assistant", "content": text}), chunk({}, "stop"), openai_wire.DONE]
    return Reply(chunks=done)


def step_requests(requests: list[Recorded]) -> list[Recorded]:
    """Each step's first request: its last message is the step prompt."""
    return [
        r
        for r in requests
        if r.body["messages"][-1]["role"] == "user"
        and is_step_prompt(r.body["messages"][-1]["content"])
    ]


@pytest.mark.anyio
async def test_the_twelfth_steps_first_request_is_the_size_of_the_firsts(make_core, provider):
    core = await make_core(queue_fallback=True)
    core.plans.review = True  # held: no step is worked before the run
    await core.submit(CHAIN)
    record = await core.plans.approve(1)
    fast = RetryPolicy(base_delay=0.01, max_delay=0.05)
    core.set_backend(
        OpenAIBackend("gpt-4o-mini", base_url=provider.url + "/v1", api_key=FAKE_KEY, retry=fast)
    )
    provider.respond = answer
    run = await core.runs.run_plan(parallel=1)
    assert set(run.workers.values()) == {"worker1"}  # one sub-agent worked every step
    assert run.states == dict.fromkeys(record.ids, StepState.DONE)
    firsts = step_requests(provider.requests)
    sizes = [len(json.dumps(r.body)) for r in firsts]
    assert len(sizes) == STEPS
    assert sizes[-1] <= 1.2 * sizes[0], sizes
    last = firsts[-1].body["messages"]
    assert [m["role"] for m in last] == ["system", "user"]  # no earlier step's turns
    prompt = last[-1]["content"]
    assert prompt.startswith("Goal: Write the guide\n\nStep 12 of 12 [q12]: Chapter 12")
    assert "- q11 (Chapter 11): Wrote Chapter 11. / It covers" in prompt  # its blocker
