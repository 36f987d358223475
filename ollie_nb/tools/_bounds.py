"""Bounds on what tools put into the history: a result cap, and argument text every transport can carry."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

DEFAULT_RESULT_CAP = 100_000
"""Characters of one tool result kept in the history (head and tail).

Every later request, the session file and the context window carry each result
again; 100,000 characters (about 25,000 tokens) holds any listing or log a model
can use, and stays far under 1 MB.
"""

_SURROGATE = re.compile("[\ud800-\udfff]")


_MARKER = re.compile(r"\n\[\.\.\. (\d+) characters cut of (\d+) \.\.\.\]\n")


def _marker(cut: int, total: int) -> str:
    return f"\n[... {cut} characters cut of {total} ...]\n"


def cap_text(text: str, cap: int) -> str:
    """`text` itself when it fits in `cap` characters; else its head and tail with a marker.

    The marker says how many characters were cut, so the model knows the result is
    partial and can ask for less (a filter, a range). A text this function (or
    `cap_parts`) already cut to `cap` comes back as it is.
    """
    if cap <= 0 or len(text) <= cap or _is_capped(text, cap):
        return text
    cut = len(text) - cap
    head = cap - cap // 2
    tail = text[len(text) - cap // 2 :] if cap // 2 else ""
    return text[:head] + _marker(cut, len(text)) + tail


def _is_capped(text: str, cap: int) -> bool:
    """True when `text` is the head, marker and tail `cap_text(..., cap)` makes."""
    found = _MARKER.match(text, cap - cap // 2)
    if found is None:
        return False
    cut, total = int(found[1]), int(found[2])
    return total - cut == cap and len(text) == cap + len(found[0])


def cap_parts(parts: Iterable[str], cap: int, sep: str = "\n") -> str:
    """`cap_text(sep.join(parts), cap)`, without ever joining more than about `cap` characters.

    For a result of many content items: the items past the head are only counted,
    and only the last ones that make the tail are kept.
    """
    items = list(parts)
    if cap <= 0:
        return sep.join(items)
    total = sum(len(p) for p in items) + len(sep) * max(0, len(items) - 1)
    if total <= cap:
        return sep.join(items)
    head_size, tail_size = cap - cap // 2, cap // 2
    head: list[str] = []
    size = 0
    for index, part in enumerate(items):
        piece = (sep if index else "") + part
        head.append(piece[: head_size - size])
        size += len(head[-1])
        if size >= head_size:
            break
    tail: list[str] = []
    size = 0
    for index in range(len(items) - 1, -1, -1):
        piece = (sep if index else "") + items[index]
        keep = tail_size - size
        tail.append(piece[len(piece) - keep :] if keep < len(piece) else piece)
        size += len(tail[-1])
        if size >= tail_size:
            break
    tail_text = "".join(reversed(tail)) if tail_size else ""
    return "".join(head) + _marker(total - cap, total) + tail_text


def clean_text(text: str) -> str:
    """Join surrogate pairs and replace lone surrogates by U+FFFD: text UTF-8 can carry.

    JSON escapes such as `"\\ud800"` decode to lone surrogates; the MCP SDK encodes
    strictly, and one such character in a request ends a stdio session.
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_arguments(value: Any) -> Any:
    """`value` with every string in it (dict keys too, at any depth) made encodable."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_arguments(k): clean_arguments(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_arguments(v) for v in value]
    return value
