"""Displayable results: every object has an HTML view and a deterministic text/plain view.

Commands return these instead of printing, so `;` silences them and `Out[n]`
keeps them; text/plain is what terminals and notebook tests compare.
"""

from __future__ import annotations

import functools
import html
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from ollie_nb.core import Notice

_MUTED = "color: var(--jp-ui-font-color2, #666)"
_ERROR = "color: var(--jp-error-color1, #c62828)"
_WARN = "color: var(--jp-warn-color1, #b26a00)"
_MARKS = {"info": "ℹ", "warning": "⚠", "error": "✖"}


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def markdown_html(markdown: str, remote_images: bool = False) -> str:
    """Model text as HTML: Markdown formatting and code blocks kept, raw HTML shown as text.

    The reply is untrusted (a prompt injection can steer it), and JupyterLab renders
    text/markdown as trusted HTML in a live session; so the HTML is built here with
    raw HTML off, and markdown-it's link check drops `javascript:` and similar URLs.
    An image the browser would fetch (`![x](https://host/p.png?k=<secret>)`, each time
    the notebook opens) is a link naming its host instead, unless `remote_images`
    (`%config OllieMagics.remote_images = True`).
    """
    return _markdown(remote_images).render(markdown)


@functools.lru_cache(maxsize=2)
def _markdown(remote_images: bool) -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    if not remote_images:
        md.add_render_rule("image", _image_as_link)
    return md


def _image_as_link(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image as text: `[image: alt (from host, not loaded)]`, a link the user may open."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if src.startswith("data:"):  # inline bytes: nothing to fetch
        return renderer.image(tokens, idx, options, env)
    alt = renderer.renderInlineAsText(token.children or [], options, env) or "untitled"
    try:
        host = urlsplit(src).hostname or "this Jupyter server"
    except ValueError:
        host = "an unreadable address"
    return (
        f'<a href="{esc(src)}" rel="noopener noreferrer nofollow" target="_blank">'
        f"[image: {esc(alt)} (from {esc(host)}, not loaded)]</a>"
    )


def plural(count: int, noun: str) -> str:
    """`1 plan`, `2 plans`."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def shorten(text: str, limit: int) -> str:
    """Keep the head of a long text and say how much was cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters]"


class Displayable(ABC):
    """Base: subclasses give `text()`, and `html()` unless preformatted text will do."""

    @abstractmethod
    def text(self) -> str:
        """The text/plain view: deterministic, what terminals and notebook tests see."""

    def html(self) -> str:
        return f"<pre>{esc(self.text())}</pre>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()


class Reply(Displayable):
    """A finished piece of the assistant's reply, rendered as Markdown (its remote images
    loaded only if `remote_images`)."""

    def __init__(self, markdown: str, remote_images: bool = False) -> None:
        self.markdown = markdown
        self.remote_images = remote_images

    def text(self) -> str:
        return self.markdown

    def html(self) -> str:
        return markdown_html(self.markdown, self.remote_images)


class Live(Displayable):
    """The in-place area of a turn: streaming text, the running tool, a retry countdown."""

    def __init__(self, markdown: str = "", remote_images: bool = False) -> None:
        self.markdown = markdown
        self.remote_images = remote_images

    def text(self) -> str:
        return self.markdown

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if not self.markdown:  # the resting state: shows nothing, compares equal everywhere
            return {"text/plain": "", "text/html": ""}
        html = markdown_html(self.markdown, self.remote_images)
        return {"text/plain": self.markdown, "text/html": html}


class Thinking(Displayable):
    """The model's reasoning, apart from the reply: a collapsed "thinking" element.

    A terminal gets one dim line instead (`terminal_line`): its start, whitespace folded.
    """

    LINE = 160  # characters of the reasoning in the terminal's line

    def __init__(self, text: str, live: bool = False) -> None:
        self.reasoning = text
        self.live = live  # still arriving: the summary says so

    def text(self) -> str:
        return f"thinking: {self.reasoning.strip()}"

    def html(self) -> str:
        words = len(self.reasoning.split())
        state = "thinking …" if self.live else f"thinking ({plural(words, 'word')})"
        return (
            f'<details style="margin:2px 0;{_MUTED}"><summary style="cursor:pointer">'
            f"{state}</summary>"
            f'<pre style="white-space:pre-wrap;{_MUTED}">{esc(self.reasoning.strip())}</pre>'
            "</details>"
        )

    def terminal_line(self) -> str:
        line = " ".join(self.reasoning.split())
        line = line if len(line) <= self.LINE else line[: self.LINE] + " …"
        return f"\x1b[2mthinking: {line}\x1b[0m"


class LiveThinking(Live):
    """The thinking element while it fills: live, so a terminal (which cannot update) skips it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.thinking = Thinking(text, live=True)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return self.thinking._repr_mimebundle_()


class NoticeView(Displayable):
    """One visible line, info, warning or error: how the notebook shows a notice, the core's
    `Notice` event (`NoticeView.of`) or a command's one-line answer."""

    def __init__(self, message: str, level: str = "info") -> None:
        self.message = message
        self.level = level

    @classmethod
    def of(cls, notice: Notice) -> NoticeView:
        """The line that shows a `Notice` event of the core."""
        return cls(notice.text, notice.level)

    def text(self) -> str:
        return f"{_MARKS.get(self.level, '')} {self.message}".strip()

    def html(self) -> str:
        style = {"error": _ERROR, "warning": _WARN}.get(self.level, _MUTED)
        return f'<div style="{style}">{esc(self.text())}</div>'


class ToolBlock(Displayable):
    """A tool call and its result, collapsible; long results are cut."""

    def __init__(
        self,
        tool: str,
        args: Any,
        result: str,
        *,
        is_error: bool = False,
        seconds: float = 0.0,
        limit: int = 2000,
    ) -> None:
        self.tool = tool
        self.args = args
        self.result = result
        self.is_error = is_error
        self.seconds = seconds
        self.limit = limit

    def _args_text(self) -> str:
        if isinstance(self.args, Mapping):
            return json.dumps(self.args, ensure_ascii=False)
        return str(self.args)

    def text(self) -> str:
        mark = "✖" if self.is_error else "→"
        head = f"{mark} {self.tool}({shorten(self._args_text(), 120).splitlines()[0]})"
        body = shorten(self.result, min(self.limit, 400))
        return head + ("\n" + "\n".join(f"  {line}" for line in body.splitlines()) if body else "")

    def html(self) -> str:
        style = _ERROR if self.is_error else ""
        args = esc(
            shorten(
                json.dumps(self.args, indent=1, ensure_ascii=False)
                if isinstance(self.args, Mapping)
                else str(self.args),
                self.limit,
            )
        )
        summary = esc(self.result.strip().splitlines()[0][:100]) if self.result.strip() else ""
        return (
            f'<details style="margin:2px 0"><summary style="cursor:pointer;{style}">'
            f"<code>{esc(self.tool)}</code> "
            f'<span style="{_MUTED}">{summary} · {self.seconds:.2f} s</span></summary>'
            f'<div style="{_MUTED}">arguments</div><pre>{args}</pre>'
            f'<div style="{_MUTED}">result</div><pre style="{style}">'
            f"{esc(shorten(self.result, self.limit))}</pre></details>"
        )


class Footer(Displayable):
    """The usage line under a turn."""

    def __init__(self, text: str) -> None:
        self.line = text

    def text(self) -> str:
        return self.line

    def html(self) -> str:
        return f'<div style="{_MUTED};font-size:smaller">{esc(self.line)}</div>'


class Table(Displayable):
    """A titled table (servers, sessions, queue, models...)."""

    def __init__(
        self,
        title: str,
        headers: Sequence[str],
        rows: Sequence[Sequence[Any]],
        footer: str = "",
        empty: str = "(none)",
    ) -> None:
        self.title = title
        self.headers = list(headers)
        self.rows = [[("" if c is None else str(c)) for c in row] for row in rows]
        self.footer = footer
        self.empty = empty

    def text(self) -> str:
        lines = [self.title] if self.title else []
        if not self.rows:
            lines.append(self.empty)
        else:
            widths = [
                max(len(h), *(len(r[i]) for r in self.rows)) for i, h in enumerate(self.headers)
            ]
            fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
            if any(self.headers):
                lines.append(fmt(self.headers))
            lines.extend(fmt(r) for r in self.rows)
        if self.footer:
            lines.append(self.footer)
        return "\n".join(lines)

    def html(self) -> str:
        head = f"<b>{esc(self.title)}</b>" if self.title else ""
        if not self.rows:
            body = f'<div style="{_MUTED}">{esc(self.empty)}</div>'
        else:
            th = "".join(f'<th style="text-align:left">{esc(h)}</th>' for h in self.headers)
            th = th if any(self.headers) else ""
            trs = "".join(
                "<tr>" + "".join(f'<td style="text-align:left">{esc(c)}</td>' for c in r) + "</tr>"
                for r in self.rows
            )
            body = f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"
        foot = f'<div style="{_MUTED}">{esc(self.footer)}</div>' if self.footer else ""
        return head + body + foot


class TextBlock(Displayable):
    """Preformatted text (help, history, task listings)."""

    def __init__(self, body: str, title: str = "") -> None:
        self.body = body
        self.title = title

    def text(self) -> str:
        return f"{self.title}\n{self.body}" if self.title else self.body

    def html(self) -> str:
        head = f"<b>{esc(self.title)}</b>" if self.title else ""
        return f"{head}<pre>{esc(self.body)}</pre>"


class Group(Displayable):
    """Several displayables shown as one result."""

    def __init__(self, *parts: Displayable) -> None:
        self.parts = [p for p in parts if p is not None]

    def text(self) -> str:
        return "\n".join(p.text() for p in self.parts)

    def html(self) -> str:
        return "".join(p.html() for p in self.parts)
