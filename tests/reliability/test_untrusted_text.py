"""Untrusted text (model replies, tool names and results, task titles) never becomes live HTML."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from ollie_nb.core import PlanMade, ToolCalled, ToolFinished
from ollie_nb.notebook._display import Live, NoticeView, Reply, Table, TextBlock, ToolBlock
from ollie_nb.notebook._render import Settings, TurnView, code_span

PAYLOAD = "<img src=x onerror=alert(document.domain)>"
EVIL_TOOL = f"x` {PAYLOAD} `"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("img", "script", "iframe", "svg", "object", "embed"):
            self.found.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"{tag} {name}={value}")


def live_tags(html: str) -> list[str]:
    """Dangerous tags and attributes a browser would build from `html` (escaped text is none)."""
    parser = _Tags()
    parser.feed(html)
    return parser.found


def bundle_html(obj) -> str:
    bundle = obj._repr_mimebundle_()
    assert "text/markdown" not in bundle  # JupyterLab renders Markdown as trusted HTML
    return bundle.get("text/html", "")


@pytest.mark.parametrize(
    "reply",
    [
        PAYLOAD,
        f"Here you go:\n\n{PAYLOAD}\n\n<script>alert(1)</script>",
        "[click](javascript:alert(1))",
        "<a href='javascript:alert(1)'>x</a>",
    ],
)
def test_a_reply_shows_raw_html_as_text(reply):
    html = bundle_html(Reply(reply))
    assert live_tags(html) == []


def test_markdown_formatting_and_code_blocks_survive():
    html = bundle_html(Reply("**bold** and `code`\n\n```python\nif a < b:\n    pass\n```"))
    assert "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert '<pre><code class="language-python">if a &lt; b:' in html


def test_a_tool_name_cannot_break_out_of_its_code_span():
    span = code_span(EVIL_TOOL)
    html = bundle_html(Live(f"*running {span} …*"))
    assert live_tags(html) == []
    assert "&lt;img" in html


def test_the_running_tool_line_of_a_turn_escapes_the_tool_name():
    shown = []
    live_updates = []
    view = TurnView(Settings(), shown.append, lambda obj: live_updates.append)
    view(ToolCalled("c1", EVIL_TOOL, "", {}))
    assert live_updates, "the running tool line is shown in the live area"
    html = bundle_html(live_updates[-1])
    assert live_tags(html) == [] and "&lt;img" in html


@pytest.mark.parametrize(
    "obj",
    [
        NoticeView(PAYLOAD, "error"),
        Table(PAYLOAD, [PAYLOAD], [[PAYLOAD]], footer=PAYLOAD),
        TextBlock(PAYLOAD, title=PAYLOAD),
        ToolBlock(EVIL_TOOL, {PAYLOAD: PAYLOAD}, PAYLOAD),
    ],
    ids=["notice", "table", "textblock", "toolblock"],
)
def test_every_displayable_escapes_its_fields(obj):
    html = bundle_html(obj)
    assert live_tags(html) == []
    assert "&lt;img" in html


def test_the_background_widget_status_escapes_the_tool_name():
    from ollie_nb.notebook._widgets import BackgroundTurn  # ipywidgets is a dependency

    turn = BackgroundTurn.__new__(BackgroundTurn)  # only the status rendering is under test
    import ipywidgets as widgets

    turn.status = widgets.HTML("")
    turn.progress = widgets.IntProgress()
    turn.view = lambda event: None
    turn.view.bar = lambda finished: None  # no plan, no queue: no bar
    turn._on_event(ToolCalled("c1", EVIL_TOOL, "", {}))
    assert live_tags(turn.status.value) == []
    assert "&lt;img" in turn.status.value


def test_a_turn_draws_its_plan_graph_off_the_kernel_thread(monkeypatch):
    """The cell shows the plan as text at once; dot runs on another thread; the graph follows."""
    import threading

    from ollie_nb.notebook import _plans
    from ollie_nb.planning import PlanRecord, PlanStep

    release = threading.Event()
    threads: list[str] = []

    def slow_svg(*args, **kwargs):
        threads.append(threading.current_thread().name)
        release.wait(10)
        return "<svg>drawn</svg>"

    monkeypatch.setattr(_plans, "plan_svg", slow_svg)
    record = PlanRecord(1, "Goal", (PlanStep("a"), PlanStep("b", after=(0,))), text="Plan: Goal")
    updates: list[str] = []

    def live(obj):
        updates.append(obj._repr_mimebundle_()["text/html"])
        return lambda new: updates.append(new._repr_mimebundle_()["text/html"])

    view = TurnView(Settings(), lambda obj: None, live)
    view(PlanMade(record))
    view(ToolFinished("p", "reasoning_plan", "reasoning", ""))
    assert "drawing the graph" in updates[0] and "Plan: Goal" in updates[0]
    view.tick()
    assert len(updates) == 1  # still drawing: nothing replaced, the kernel thread not held
    release.set()
    view.finish()
    assert "<svg>drawn</svg>" in updates[-1]
    assert threads and all(name.startswith("ollie-dot") for name in threads)
