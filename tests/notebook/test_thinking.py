"""Reasoning shown apart from the reply, and the prompt cache and cost in `%ollie usage` /
`%ollie cost`: in a real kernel, with the offline model scripted to think and the fake
OpenAI provider reporting cached tokens and cost."""

from __future__ import annotations

import pytest

from tests.llm.test_openai import DONE, chunk
from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.llm_fake_provider import FAKE_KEY, Reply

REASONING = "Add 40 and 2 <b>carefully</b>; the user wants one number."
THINKING_MODEL = f"""
import ollie_nb
from ollie_nb.llm import Message, OfflineBackend, ThinkingBlock
thought = ThinkingBlock(thinking={REASONING!r}, signature="sig-1")
ollie_nb.use_backend(OfflineBackend(turns=[Message.assistant("The answer is 42.", thinking=[thought])]))
"""


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(str(tmp_path), kernel_env(tmp_path))
    assert k.run("%load_ext ollie_nb").error is None
    yield k
    k.shutdown()


def test_reasoning_is_a_collapsed_element_that_fills_live_never_the_reply(kernel):
    assert kernel.run(THINKING_MODEL).error is None
    live: list[str] = []

    def watch(kind: str, content: dict) -> None:
        if kind in ("display_data", "update_display_data"):
            live.append(content["data"].get("text/html", ""))

    run = kernel.run("%%ollie\nwhat is 40 + 2?", on_message=watch)
    assert run.error is None, run.error
    # shown while it came: the live element, its summary still "thinking …", holds the text
    assert any("thinking …" in h and "&lt;b&gt;carefully" in h for h in live)
    htmls = [o["data"].get("text/html", "") for o in run.outputs if "data" in o]
    (element,) = [h for h in htmls if "<details" in h and "thinking (" in h]
    assert "&lt;b&gt;carefully&lt;/b&gt;" in element and "<b>carefully" not in element
    assert "<details" in element and " open" not in element  # collapsed
    texts = run.texts()
    assert f"thinking: {REASONING}" in texts
    reply = next(t for t in texts if "The answer is 42." in t)
    assert "Add 40" not in reply
    history = kernel.run("print(ollie_nb.agent().history[-1].content)").text()
    assert history.strip() == "The answer is 42."


def usage_reply(text: str) -> Reply:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 7,
        "total_tokens": 1207,
        "prompt_tokens_details": {"cached_tokens": 1024},
        "cost": 0.0123,
    }
    return Reply(
        chunks=[
            chunk({"role": "assistant", "content": text}),
            chunk({}, "stop"),
            chunk(None, usage=usage),
            DONE,
        ]
    )


def test_usage_and_cost_show_the_prompt_cache_and_the_cost(kernel, provider):
    provider.queue(usage_reply("Hello."))
    backend = (
        "import ollie_nb\nfrom ollie_nb.llm import OpenAIBackend\n"
        f"ollie_nb.use_backend(OpenAIBackend('gpt-4o', base_url={provider.url + '/v1'!r}, "
        f"api_key={FAKE_KEY!r}))"
    )
    assert kernel.run(backend).error is None
    assert kernel.run("%%ollie\nhi").error is None
    usage = kernel.run("%ollie usage").text()
    assert (
        "1 request, 1,200 tokens in, 7 tokens out (1,024 cached, 0 cache writes), $0.0123" in usage
    )
    cost = kernel.run("%ollie cost").text()
    assert "$0.0123 this session" in cost and "prompt cache: 1024 tokens read, 0 written" in cost
    fields = kernel.run("u = %ollie usage\nprint(u.cache_read_tokens, u.cost)").text()
    assert fields.strip().endswith("1024 0.0123")


def test_a_terminal_gets_one_dim_line_and_no_live_element(monkeypatch, capsys):
    from ollie_nb.notebook import _output
    from ollie_nb.notebook._display import LiveThinking, Thinking

    shown: list = []
    monkeypatch.setattr(_output, "_text_only", lambda: True)
    monkeypatch.setattr(_output, "display", lambda obj, **kw: shown.append(obj))
    _output.live_display(LiveThinking("half a thought"))
    _output.show(Thinking("First,\n  the sum.\n" + "x" * 300))
    line = capsys.readouterr().out
    assert shown == []  # the live element is not printed in a terminal
    assert line.startswith("\x1b[2mthinking: First, the sum. xxx") and line.endswith(" …\x1b[0m\n")


def test_the_background_status_says_thinking_while_the_model_reasons():
    import ipywidgets as widgets

    from ollie_nb.core import ReasoningDelta, TextDelta
    from ollie_nb.notebook._widgets import BackgroundTurn

    turn = BackgroundTurn.__new__(BackgroundTurn)  # only the status line is under test
    turn.status = widgets.HTML("")
    turn.progress = widgets.IntProgress()
    turn.view = lambda event: None
    turn.view.bar = lambda finished: None  # no plan, no queue: no bar
    turn._on_event(ReasoningDelta("hmm"))
    assert turn.status.value == "<b>ollie</b> thinking …"
    turn._on_event(TextDelta("The answer"))
    assert turn.status.value == "<b>ollie</b> writing …"
