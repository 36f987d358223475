"""Rich MCP tool content reaches the model, and task-only tools are not offered.

The third-party server is the official `server-everything` from npm over stdio; the model
is the fake provider speaking the OpenAI or Anthropic wire format, which records what the
model received.
"""

from __future__ import annotations

import asyncio
import base64
import re
import struct
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from ollie_nb.core import AgentConfig, AgentCore
from ollie_nb.llm import _openai
from ollie_nb.tools import McpServer
from ollie_nb.tools._mcp import TASK_REQUIRED
from tests.conftest import MakeCore
from tests.core.test_provider_requests import WIRES, Wire, allow, run_turns, tool_text
from tests.support.llm_fake_provider import Reply
from tests.support.npm_servers import server_everything

CALLS = [
    ("call_img", "get-tiny-image", {}),
    ("call_res", "get-resource-reference", {"resourceType": "Text", "resourceId": 2}),
    ("call_links", "get-resource-links", {"count": 2}),
    ("call_blob", "get-resource-reference", {"resourceType": "Blob", "resourceId": 1}),
]


@pytest.fixture(scope="session")
def everything() -> list[str]:
    return server_everything()


@pytest.fixture(scope="session")
def tiny_image(everything) -> Any:
    """The image content server-everything returns, as a plain SDK client receives it."""

    async def fetch() -> Any:
        params = StdioServerParameters(command=everything[0], args=everything[1:])
        async with Client(params, read_timeout_seconds=30) as client:
            result = await client.call_tool("get-tiny-image", {})
        return next(item for item in result.content if item.type == "image")

    return asyncio.run(fetch())


# OpenAI with images sent and without (a compatible server off the image hosts); Anthropic
# takes images in every tool result.
SETUPS = [(WIRES[0], True), (WIRES[0], False), (WIRES[1], True)]


@pytest.fixture(params=SETUPS, ids=["openai", "openai-text-only", "anthropic"])
def wire_images(request, monkeypatch) -> tuple[Wire, bool]:
    wire, images = request.param
    if wire.name == "openai":  # images go to listed hosts only; the fake one is on 127.0.0.1
        monkeypatch.setattr(_openai, "IMAGE_HOSTS", frozenset({"127.0.0.1"} if images else ()))
    return wire, images


async def _core(make_core: MakeCore, wire: Wire, provider, everything: list[str]) -> AgentCore:
    server = {"command": everything[0], "args": everything[1:], "timeout": 30.0}
    config = AgentConfig.from_dict({"mcpServers": {"everything": server}})
    return await make_core(wire.make(provider), agent=config, approve=allow)


def _queue_calls(provider, wire: Wire) -> None:
    provider.queue(*(Reply(chunks=wire.call(i, n, a)) for i, n, a in CALLS))
    provider.queue(Reply(chunks=wire.text("Seen.")))


def _anthropic_result(body: dict, call_id: str) -> dict:
    block = body["messages"][-1]["content"][-1]
    assert block["type"] == "tool_result" and block["tool_use_id"] == call_id
    return block


@pytest.mark.anyio
async def test_images_resources_and_links_reach_the_model(
    make_core, provider, wire_images, everything, tiny_image
):
    wire, images = wire_images
    _queue_calls(provider, wire)
    core = await _core(make_core, wire, provider, everything)
    (result,), _ = await run_turns(core, "show me")
    assert result.reply == "Seen."
    bodies = [r.body for r in provider.requests]
    texts = {call_id: tool_text(core, call_id) for call_id, _, _ in CALLS}

    raw = base64.b64decode(tiny_image.data)
    width, height = struct.unpack(">II", raw[16:24])  # the PNG's IHDR
    assert f"[image 1: image/png, {len(raw)} bytes, {width}x{height} pixels]" in texts["call_img"]
    assert "[image content]" not in texts["call_img"]

    assert re.search(
        r"^\[resource demo://resource/dynamic/text/2 \(text/plain\)\]\n"
        r"Resource 2: This is a plaintext resource created at ",
        texts["call_res"],
        re.MULTILINE,
    )
    links = texts["call_links"].splitlines()
    assert links[1:] == [
        "[resource link: Blob Resource 1 <demo://resource/dynamic/blob/1> (text/plain): "
        "Resource 1: plaintext resource]",
        "[resource link: Text Resource 2 <demo://resource/dynamic/text/2> (text/plain): "
        "Resource 2: plaintext resource]",
    ]
    blob = re.search(
        r"\[resource demo://resource/dynamic/blob/1 \(text/plain\): (\d+) bytes", texts["call_blob"]
    )
    assert blob and "of binary data, not shown]" in texts["call_blob"]

    if wire.name == "anthropic":
        block = _anthropic_result(bodies[1], "call_img")
        assert block["content"] == [
            {"type": "text", "text": texts["call_img"]},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": tiny_image.data},
            },
        ]
        for body, (call_id, _, _) in zip(bodies[2:], CALLS[1:]):
            assert body["messages"][-1] == wire.tool_result(call_id, texts[call_id])
        return
    tool_msg, *rest = bodies[1]["messages"][-2:] if images else bodies[1]["messages"][-1:]
    assert tool_msg == wire.tool_result("call_img", texts["call_img"])
    if images:
        assert rest == [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "The 1 image returned by tool call call_img (get-tiny-image):",
                    },
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64," + tiny_image.data},
                    },
                ],
            }
        ]
    # Later requests still carry the image after its tool message, before the next reply.
    later = bodies[2]["messages"]
    at = later.index(tool_msg)
    assert (later[at + 1]["role"], later[at + 2]["role"]) == (
        ("user", "assistant") if images else ("assistant", "tool")
    )
    for body, (call_id, _, _) in zip(bodies[2:], CALLS[1:]):
        assert body["messages"][-1] == wire.tool_result(call_id, texts[call_id])


@pytest.mark.anyio
async def test_a_task_only_tool_is_not_offered_and_says_why(make_core, provider, everything):
    wire = WIRES[0]
    provider.queue(Reply(chunks=wire.text("ok")))
    core = await _core(make_core, wire, provider, everything)
    await core.submit("hello")
    listing = core.list_servers()
    offered = wire.tools(provider.requests[0].body)
    assert "get-tiny-image" in offered and "simulate-research-query" not in offered
    (server,) = [s for s in listing.servers if s.name == "everything"]
    assert server.withheld == (("simulate-research-query", TASK_REQUIRED),)
    assert (
        f"MCP server everything: tool 'simulate-research-query' is not offered: {TASK_REQUIRED}"
        in listing.messages
    )


@pytest.mark.anyio
async def test_calling_a_task_only_tool_directly_says_why_without_a_request(everything):
    server = McpServer("ev", command=everything[0], args=everything[1:], call_timeout=30)

    async def run():
        await server.connect()
        try:
            names = [t.name for t in await server.list_tools()]
            return names, await server.call_tool("simulate-research-query", {"topic": "x"})
        finally:
            await server.aclose()

    names, result = await run()
    assert "simulate-research-query" not in names and "echo" in names
    assert result.is_error
    assert result.text == f"error: ev.simulate-research-query is not offered: {TASK_REQUIRED}"
