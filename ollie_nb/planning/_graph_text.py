"""Text inside a plan graph: titles wrapped and escaped for DOT labels, tooltips, the legend."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from ._graph_status import STATUS_STYLES, STATUSES

EDGE_COLOUR = "#8A8A8A"

_WRAP_WIDTH = 28
_WRAP_LINES = 3

_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    """Drop characters that cannot appear in SVG text."""
    return _UNSAFE_CHARS.sub("", str(text))


def _one_line(text: str) -> str:
    """Text for a single-line label: unsafe characters dropped, whitespace runs made one space."""
    return " ".join(_clean(text).split())


def _wrap_title(text: str, width: int = _WRAP_WIDTH, max_lines: int = _WRAP_LINES) -> list[str]:
    """Wrap a title into at most `max_lines` lines of `width` characters, ending in … if cut."""
    lines = textwrap.wrap(
        _one_line(text), width=width, break_long_words=True, break_on_hyphens=True
    )
    if not lines:
        return [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    return lines


def _escape_line(line: str) -> str:
    """Make one line literal for a DOT escString: backslashes and entities are not interpreted."""
    return line.replace("\\", "\\\\").replace("&", "&amp;")


def _dot_text(lines: Sequence[str]) -> str:
    """A DOT label/tooltip value showing `lines` literally, one per line, never as HTML."""
    from graphviz import nohtml

    text: str = nohtml("\\n".join(_escape_line(line) for line in lines))  # a str marked "not HTML"
    return text


# Some dot versions expand \N, \G, \E, \T, \H, \L in tooltips even when the backslash
# is escaped; an invisible word joiner after the backslash keeps such text literal.
_TOOLTIP_SUBST = re.compile(r"\\(?=[GNETHL])")


def _tooltip(text: str, limit: int) -> str:
    """Tooltip text: the original line breaks kept, cut at `limit` characters."""
    text = _clean(text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ").strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = _TOOLTIP_SUBST.sub(lambda m: "\\\u2060", text)
    return _dot_text(text.split("\n"))


def _legend_label(statuses: Sequence[str], fontsize: int) -> str:
    """An HTML-like table showing the style of each status present in the plan."""
    rows = []
    for status in STATUSES:
        if status not in statuses:
            continue
        st = STATUS_STYLES[status]
        line = "" if st.line in ("solid", "bold") else f' STYLE="{st.line}"'
        text = f'<FONT COLOR="{st.font}">{st.label}</FONT>'
        if st.line == "bold":
            text = f"<B>{text}</B>"
        rows.append(f'<TR><TD BGCOLOR="{st.fill}" COLOR="{st.border}"{line}>{text}</TD></TR>')
    return (
        f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="3" CELLPADDING="2">'
        f'<TR><TD BORDER="0"><FONT COLOR="{EDGE_COLOUR}" POINT-SIZE="{fontsize}">'
        f"status</FONT></TD></TR>{''.join(rows)}</TABLE>>"
    )
