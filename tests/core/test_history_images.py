"""Images past the conversation's last few are not sent again with every request (issue 34:
after ten screenshot calls every request carried 40 images, 48 MB)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.core._history import KEPT_IMAGES, older_images_described
from ollie_nb.llm import AnthropicBackend, ImagePart, Message, RetryPolicy
from tests.conftest import MakeCore
from tests.llm import test_anthropic as anthropic_wire
from tests.support.agents import FIXTURES
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply

PNG = ImagePart("image/png", "iVBORw0KGgo=")


def screenshots(count: int, each: int = 4) -> list[Message]:
    history = [Message.user("look")]
    for n in range(count):
        history.append(Message.tool(f"c{n}", f"[{each} images]", name="shot", images=[PNG] * each))
    return history


def test_a_history_within_the_bound_is_sent_as_it_is():
    history = screenshots(2)
    assert older_images_described(history) == history


def test_older_images_become_a_note_and_the_last_ones_are_kept():
    history = screenshots(10)
    sent = older_images_described(history)
    assert [len(m.images) for m in sent[1:]] == [0] * 8 + [4, 4]
    assert sent[1].content == (
        "[4 images]\n[4 images of this result not sent again: requests carry the last 8]"
    )
    assert sent[-1] is history[-1]
    assert [len(m.images) for m in history[1:]] == [4] * 10  # the history itself keeps them


def test_a_result_that_would_pass_the_bound_loses_all_its_images_and_older_ones_too():
    history = screenshots(3, each=3)  # 9 images: the oldest result's 3 do not all fit
    sent = older_images_described(history, keep=7)
    assert [len(m.images) for m in sent[1:]] == [0, 3, 3]


def call(call_id: str, name: str, args: dict) -> Reply:
    return Reply(
        chunks=[
            anthropic_wire.MESSAGE_START,
            *anthropic_wire.tool_block(0, call_id, name, json.dumps(args)),
            *anthropic_wire.finish("tool_use", 5),
        ]
    )


def images_sent(body: dict) -> int:
    return sum(
        1
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list)
        for part in block["content"]
        if part["type"] == "image"
    )


@pytest.mark.slow
@pytest.mark.anyio
async def test_ten_screenshot_calls_send_the_last_eight_images_only(
    make_core: MakeCore, provider: FakeProvider, tmp_path: Path
):
    provider.queue(*(call(f"c{n}", "screenshot", {}) for n in range(10)))
    provider.queue(Reply(chunks=anthropic_wire.TEXT_REPLY))
    server = {
        "command": sys.executable,
        "args": [str(FIXTURES / "hostile_server.py")],
        "env": {"CALLS": str(tmp_path / "calls.jsonl")},
    }
    backend = AnthropicBackend(
        "claude-sonnet-4-6", api_key=FAKE_KEY, base_url=provider.url, retry=RetryPolicy(0.01, 0.05)
    )
    agent = AgentConfig.from_dict({"mcpServers": {"search": server}, "trustedTools": ["*"]})
    core = await make_core(backend, agent=agent)
    await core.submit("take screenshots")
    sent = [images_sent(r.body) for r in provider.requests]
    assert sent == [0, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8]
    assert max(sent) == KEPT_IMAGES
