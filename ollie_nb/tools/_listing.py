"""Caps on what one MCP server's tool listing puts into every request (docs/RELIABILITY.md).

The tools' names, descriptions and input schemas travel with every model request, so a
server that lists megabytes of them costs every turn. Each server's listing is cut to
`ListingCaps` once, when it is listed, and the cut is told in one notice naming the server.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ollie_nb.tools._types import ToolInfo

DESCRIPTION_CUT = " [... description cut: {} characters]"


@dataclass(frozen=True)
class ListingCaps:
    """Per-server caps: a description's characters, an input schema's JSON characters,
    the tools offered, and the characters of all its descriptions and schemas together.

    Far above what real servers list (their descriptions run to a few thousand characters,
    their schemas a few thousand, the largest servers about a hundred tools), so only a
    listing bloated on purpose or by a bug is cut (docs/RELIABILITY.md).
    """

    description: int = 8_000
    schema: int = 40_000
    tools: int = 200
    total: int = 600_000


DEFAULT_LISTING_CAPS = ListingCaps()


@dataclass(frozen=True)
class FittedListing:
    """A listing cut to its caps, and the one notice that says what was cut ("": nothing)."""

    tools: tuple[ToolInfo, ...]
    notice: str = ""


def fit_listing(server: str, tools: Sequence[ToolInfo], caps: ListingCaps) -> FittedListing:
    """The tools of `server` within `caps`: long descriptions shortened; tools whose schema
    is over its cap, and every tool past the count or the total, not offered."""
    kept: list[ToolInfo] = []
    shortened: list[str] = []
    big_schema: list[str] = []
    dropped: list[str] = []
    total = 0
    for tool in tools:
        size = len(json.dumps(tool.input_schema, ensure_ascii=False))
        if size > caps.schema:
            big_schema.append(tool.name)
            continue
        if len(tool.description) > caps.description:
            cut = len(tool.description) - caps.description
            tool = replace(
                tool, description=tool.description[: caps.description] + DESCRIPTION_CUT.format(cut)
            )
            shortened.append(tool.name)
        size += len(tool.description)
        if len(kept) >= caps.tools or total + size > caps.total:
            dropped.append(tool.name)
            continue
        kept.append(tool)
        total += size
    return FittedListing(tuple(kept), _notice(server, caps, shortened, big_schema, dropped))


def _notice(
    server: str, caps: ListingCaps, shortened: list[str], big: list[str], dropped: list[str]
) -> str:
    """One line naming the server and each kind of cut, with a few of the tools it touched."""
    parts = []
    if shortened:
        parts.append(
            f"{_count(shortened, 'description', 'descriptions')} cut to {caps.description:,} characters ({_some(shortened)})"
        )
    if big:
        parts.append(
            f"{_count(big)} not offered: input schema over {caps.schema:,} characters "
            f"({_some(big)})"
        )
    if dropped:
        parts.append(
            f"{_count(dropped)} not offered: past {caps.tools} tools or {caps.total:,} "
            f"characters of descriptions and schemas ({_some(dropped)})"
        )
    if not parts:
        return ""
    return f"MCP server {server}: its tool listing is over the caps: " + "; ".join(parts)


def _count(names: list[str], one: str = "tool", many: str = "tools") -> str:
    return f"{len(names)} {one if len(names) == 1 else many}"


def _some(names: list[str], shown: int = 3) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")
