"""What a provider's prompt cache can serve over a 20-turn session.

A 20-turn session runs through AgentCore (offline model, the real system prompt and the
built-in tools; each turn one tool call, then a reply), and each request the model gets
is built as the Anthropic backend sends it. Reading it in the cache's order (tools,
system, then each message's content blocks), a request's servable share is the part
that ends at a breakpoint the previous request marked and is byte-identical to that
request up to there: what the cache wrote last time and can read now. The markers
themselves are left out of the bytes compared: they say where to cache, they are not
content (the tail's marker moves on every request). Turn 1 writes the cache; the
figure is the median share over the requests of turns 2 to 20.
"""

from __future__ import annotations

import json
import tempfile
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, median
from ollie_nb.core import AgentCore
from ollie_nb.llm import AnthropicBackend, GenerationParams, Message, OfflineBackend, ToolDef

TURNS = 20
SMOKE_TURNS = 3
GOAL = 90.0  # percent

Block = tuple[bytes, bool]  # one block's bytes, and whether it carries a cache breakpoint


def blocks(body: dict[str, Any]) -> list[Block]:
    """A Messages API request as the cache reads it: tools, system, then message blocks."""
    out: list[Block] = []
    for tool in body.get("tools", ()):
        out.append(_block(["tool"], tool))
    for block in body.get("system", ()):
        out.append(_block(["system"], block))
    for n, message in enumerate(body["messages"]):
        for block in message["content"]:
            out.append(_block([n, message["role"]], block))
    return out


def _block(where: list[Any], block: dict[str, Any]) -> Block:
    content = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps([*where, content]).encode(), "cache_control" in block


def servable(current: list[Block], previous: list[Block]) -> float:
    """The share (%) of `current` up to a breakpoint of `previous` and identical to it.

    The prefix must also end at or before the last breakpoint of `current`, which is
    where the provider looks for it.
    """
    marks = [i for i, (_, marked) in enumerate(current) if marked]
    last = marks[-1] if marks else -1
    same = 0
    while same < min(len(current), len(previous)) and current[same][0] == previous[same][0]:
        same += 1
    ends = [i for i, (_, marked) in enumerate(previous) if marked and i < same and i <= last]
    served = sum(len(b) for b, _ in current[: ends[-1] + 1]) if ends else 0
    return 100.0 * served / sum(len(b) for b, _ in current)


def _scripted(requests: list[tuple[list[Message], list[ToolDef]]]) -> OfflineBackend:
    """Each prompt: a reasoning_think call first, then a reply; every request recorded."""

    def reply(messages: list[Message], tools: list[ToolDef]) -> Any:
        requests.append((list(messages), list(tools)))
        turn = sum(1 for m in messages if m.role == "user")
        if messages[-1].role == "user":
            thought = f"Turn {turn}: read the cell, check the data frame, then answer."
            return [{"name": "reasoning_think", "arguments": {"thought": thought}}]
        return (
            f"Turn {turn} done: the cell ran, the frame has 1,204 rows and 9 columns; "
            "the next step is to plot the monthly totals and check the outliers."
        )

    return OfflineBackend(reply)


async def session_requests(
    workdir: str, turns: int = TURNS
) -> list[tuple[list[Message], list[ToolDef]]]:
    """The (messages, tools) of every model request of a session of `turns` turns."""
    requests: list[tuple[list[Message], list[ToolDef]]] = []
    core = AgentCore(_scripted(requests), workdir=workdir, autosave=False)
    async with core:
        for i in range(turns):
            result = await core.submit(
                f"Prompt {i + 1}: run the next analysis cell on sales.csv and tell me what "
                "changed since the last run, with the numbers."
            )
            if result.error:
                raise RuntimeError(f"turn {i + 1} failed: {result.error}")
    return requests


async def run(settings: Settings) -> list[Figure]:
    """Build each request as Anthropic gets it and measure its servable share."""
    turns = settings.size(TURNS, SMOKE_TURNS)
    with tempfile.TemporaryDirectory(dir=settings.scratch) as workdir:
        requests = await session_requests(workdir, turns)
    backend = AnthropicBackend("claude-sonnet-4-6", api_key="unused")
    cached = [blocks(backend._request(m, t, GenerationParams())) for m, t in requests]
    plain = [
        blocks(backend._request(m, t, GenerationParams(prompt_cache=False))) for m, t in requests
    ]
    per_turn = len(requests) // turns
    shares = [servable(cached[n], cached[n - 1]) for n in range(per_turn, len(requests))]
    unmarked = [servable(plain[n], plain[n - 1]) for n in range(per_turn, len(requests))]
    ours = median(shares)
    return [
        Figure(
            what=f"prompt cache: servable share of each request, turns 2-{turns}",
            unit="%",
            ours=ours,
            baseline=None,
            baseline_what="",
            goal=f">= {GOAL:g} %",
            met=ours >= GOAL,
            samples=len(shares),
            note=(
                f"{len(requests)} requests, {len(requests[0][1])} tools; lowest share "
                f"{min(shares):.1f} %; without breakpoints {median(unmarked):.0f} %"
            ),
        )
    ]


ROW = Row("cache", "Prompt caching: what the provider cache can serve", run)
