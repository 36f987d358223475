"""`%ollie cost` and `%ollie usage` in a real kernel, for providers that report tokens, not money.

The fake provider streams OpenAI's and Anthropic's real usage records; the cost comes from
the genai-prices table. The figures below are the providers' published prices:
gpt-4o-mini $0.15 / $0.60 per million tokens in / out; claude-sonnet-4-6 $3 in, $15 out,
$3.75 per million written to the prompt cache and $0.30 read from it.
"""

from __future__ import annotations

import pytest

from tests.llm import test_anthropic as anthropic_wire
from tests.llm.test_openai import DONE, chunk
from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.llm_fake_provider import FAKE_KEY, Reply, json_reply


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    assert k.run("%load_ext ollie_nb").error is None
    yield k
    k.shutdown()


def openai_reply(prompt_tokens: int, completion_tokens: int) -> Reply:
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return Reply(
        chunks=[chunk({"content": "Hello."}), chunk({}, "stop"), chunk(None, usage=usage), DONE]
    )


def use(kernel: Kernel, backend: str) -> None:
    code = f"import ollie_nb\nfrom ollie_nb.llm import *\nollie_nb.use_backend({backend})"
    assert kernel.run(code).error is None
    turn = kernel.run("%%ollie\nhi")
    assert turn.error is None and "✖" not in turn.text(), turn.text()


def test_cost_of_priced_models_and_no_price_for_an_unknown_one(kernel, provider):
    url, key = provider.url, FAKE_KEY
    provider.queue(openai_reply(500, 5))
    use(kernel, f"OpenAIBackend('house-model-7', base_url={url + '/v1'!r}, api_key={key!r})")
    cost = kernel.run("%ollie cost").text()
    assert "no price known for house-model-7 on openai" in cost and "$0" not in cost
    assert "no price known" in kernel.run("%ollie usage").text()

    provider.queue(openai_reply(2000, 20))  # 2000 x 0.15 + 20 x 0.60 per million: $0.000312
    use(kernel, f"OpenAIBackend('gpt-4o-mini', base_url={url + '/v1'!r}, api_key={key!r})")
    cost = kernel.run("%ollie cost").text()
    assert "$0.0003 + 1 request with no price known this session" in cost
    assert "gpt-4o-mini on openai" in cost

    # 2000 uncached in ($0.006), 2000 written ($0.0075), 6000 read ($0.0018), 1000 out ($0.015)
    no_models = json_reply(404, {"type": "error", "error": {"message": "no listing here"}})
    provider.queue(
        no_models,  # the context window is asked for first (the history is 2,500 tokens)
        Reply(
            chunks=[
                anthropic_wire.cached_start(2000, 2000, 6000),
                *anthropic_wire.text_block(0, "Hi."),
                *anthropic_wire.finish("end_turn", 1000),
            ]
        ),
    )
    use(kernel, f"AnthropicBackend('claude-sonnet-4-6', base_url={url!r}, api_key={key!r})")
    fields = kernel.run("u = %ollie usage\nprint(round(u.cost, 6), u.cache_write_tokens)").text()
    assert fields.strip().endswith("0.030612 2000")  # 0.000312 + 0.0303
    cost = kernel.run("%ollie cost").text()
    assert "$0.0306 + 1 request with no price known this session" in cost
    assert "prompt cache: 6000 tokens read, 2000 written" in cost


def test_the_offline_model_costs_nothing_and_says_so(kernel):
    use(kernel, "OfflineBackend()")
    cost = kernel.run("%ollie cost").text()
    assert "$0.0000 this session: offline-planner is a local model (offline)" in cost
    assert "no price" not in cost
    assert "(a local model: no cost)" in kernel.run("%ollie usage").text()


def test_a_cap_set_as_a_trait_ends_the_turn_with_one_line_and_lifts_live(kernel):
    assert kernel.run("%config OllieMagics.max_session_tokens = 1").error is None  # at start
    script = "[[{'name': 'no_such_tool', 'arguments': {}}], 'said once the cap was lifted']"
    code = f"import ollie_nb\nfrom ollie_nb.llm import *\nollie_nb.use_backend(OfflineBackend(turns={script}))"
    assert kernel.run(code).error is None
    run = kernel.run("%%ollie\ngo")
    lines = [t for t in run.texts() if "token cap" in t]
    assert len(lines) == 1 and "the session's token cap 1 is reached" in lines[0], run.texts()
    assert "once the cap was lifted" not in run.text()
    assert kernel.run("%config OllieMagics.max_session_tokens = 0").error is None  # while running
    assert "said once the cap was lifted" in kernel.run("%%ollie\ngo on").text()
    bad = kernel.run("%config OllieMagics.max_plan_cost = -1")
    assert "max_plan_cost: -1.0 must be 0 or more" in (bad.error or "") + bad.stderr()
