"""Bounds on what tools put into the history: a result cap, and argument text every transport can carry."""

from __future__ import annotations

import re
from typing import Any

DEFAULT_RESULT_CAP = 100_000
"""Characters of one tool result kept in the history (head and tail).

Every later request, the session file and the context window carry each result
again; 100,000 characters (about 25,000 tokens) holds any listing or log a model
can use, and stays far under 1 MB.
"""

_SURROGATE = re.compile("[\ud800-\udfff]")


def cap_text(text: str, cap: int) -> str:
    """`text` itself when it fits in `cap` characters; else its head and tail with a marker.

    The marker says how many characters were cut, so the model knows the result is
    partial and can ask for less (a filter, a range).
    """
    if cap <= 0 or len(text) <= cap:
        return text
    cut = len(text) - cap
    head = cap - cap // 2
    tail = text[len(text) - cap // 2 :] if cap // 2 else ""
    return f"{text[:head]}\n[... {cut} characters cut of {len(text)} ...]\n{tail}"


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
