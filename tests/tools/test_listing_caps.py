"""A server's tool listing is cut to per-server caps, with one notice naming the server (issue 34:
a listing of 29 million characters went out with every request)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ollie_nb.core import AgentConfig
from ollie_nb.core._tool_servers import connect_tool_servers
from ollie_nb.tools import Dispatcher, ListingCaps, ToolInfo
from ollie_nb.tools._listing import fit_listing
from tests.support.agents import FIXTURES

CAPS = ListingCaps(description=100, schema=200, tools=3, total=1_000)


def tool(name: str, description: str = "", enum: int = 0) -> ToolInfo:
    schema = {"type": "object", "properties": {"x": {"enum": ["v" * 8] * enum}}}
    return ToolInfo("srv", name, description, schema)


def size(tools: tuple[ToolInfo, ...]) -> int:
    return sum(len(t.description) + len(json.dumps(t.input_schema)) for t in tools)


def test_a_listing_within_the_caps_is_kept_as_it_is_without_a_notice():
    tools = [tool("a", "Does a."), tool("b", "Does b.")]
    fitted = fit_listing("srv", tools, CAPS)
    assert fitted.tools == tuple(tools) and fitted.notice == ""


def test_a_long_description_is_cut_and_says_so():
    fitted = fit_listing("srv", [tool("a", "d" * 150)], CAPS)
    (kept,) = fitted.tools
    assert kept.description == "d" * 100 + " [... description cut: 50 characters]"
    assert fitted.notice == (
        "MCP server srv: its tool listing is over the caps: 1 description cut to 100 characters (a)"
    )


def test_a_tool_whose_schema_is_over_its_cap_is_not_offered():
    fitted = fit_listing("srv", [tool("big", enum=30), tool("small")], CAPS)
    assert [t.name for t in fitted.tools] == ["small"]
    assert "1 tool not offered: input schema over 200 characters (big)" in fitted.notice


def test_tools_past_the_count_or_the_total_are_not_offered_in_one_notice():
    many = [tool(f"t{n}") for n in range(6)]
    fitted = fit_listing("srv", many, CAPS)
    assert [t.name for t in fitted.tools] == ["t0", "t1", "t2"]
    assert fitted.notice.endswith(
        "3 tools not offered: past 3 tools or 1,000 characters of descriptions and schemas "
        "(t3, t4, t5)"
    )
    heavy = [tool(f"h{n}", "d" * 90, enum=10) for n in range(3)]  # about 270 characters each
    fitted = fit_listing("srv", heavy, ListingCaps(description=100, schema=200, total=600))
    assert [t.name for t in fitted.tools] == ["h0", "h1"] and size(fitted.tools) <= 600
    assert "1 tool not offered: past 200 tools or 600 characters" in fitted.notice


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_hostile_servers_listing_is_cut_at_connect_with_one_notice(tmp_path: Path):
    server = {
        "command": sys.executable,
        "args": [str(FIXTURES / "hostile_server.py")],
        "env": {
            "CALLS": str(tmp_path / "calls.jsonl"),
            "DESCRIPTION": "1000000",  # a megabyte of description
            "SCHEMA": "1000000",  # and of schema
            "EXTRA": "300",
        },
    }
    config = AgentConfig.from_dict({"mcpServers": {"search": server}})

    env = await connect_tool_servers(config, Dispatcher(), tmp_path)
    try:
        tools: list[ToolInfo] = await env.dispatcher.get_server("search").list_tools()
        messages = env.messages
    finally:
        await env.aclose()
    caps = ListingCaps()
    assert len(tools) <= caps.tools and size(tuple(tools)) <= caps.total
    assert all(len(t.description) < caps.description + 50 for t in tools)
    assert "deep" not in {t.name for t in tools}
    (notice,) = [m for m in messages if "over the caps" in m]
    assert notice.startswith("MCP server search: its tool listing is over the caps: ")
    assert "(web_search)" in notice and "(deep)" in notice and "tools not offered: past" in notice
