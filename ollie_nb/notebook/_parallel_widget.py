"""`%ollie run --parallel N`'s widget: the plan graph filling in, one live tab per worker.

The core calls `post_run` (the run's events) and `post_child` (each child's turn
events) on its loop thread; `tick`, on the kernel thread, renders them: each child's
TurnView writes into its own ipywidgets Output (name, step, streaming reply, tool
calls, status), and the graph colours each step by state, grouped by its child.
Its text/plain is fixed, so saved notebooks do not depend on timing.
"""

from __future__ import annotations

import asyncio
import queue
from typing import TYPE_CHECKING, Any

from IPython.display import display

from ollie_nb import core
from ollie_nb.core import WatchWhat
from ollie_nb.errors import OllieUsageError
from ollie_nb.notebook._display import NoticeView, Table, esc
from ollie_nb.notebook._plans import PlanGraphView
from ollie_nb.notebook._render import Settings, TurnView
from ollie_nb.notebook._widgets import OutputSink
from ollie_nb.planning import StepState, state_label

if TYPE_CHECKING:
    from ollie_nb.notebook._runtime import NotebookRuntime

TICK = 0.1
LEVELS = {
    WatchWhat.FAILED: "warning",
    WatchWhat.STOPPED: "error",
    WatchWhat.SKIPPED: "warning",
    WatchWhat.NOTE: "warning",
}
RUN_STATES = {  # the graph's state of a step the notice is about
    WatchWhat.CLAIMED: StepState.IN_PROGRESS,
    WatchWhat.DONE: StepState.DONE,
    WatchWhat.FAILED: StepState.FAILED,
    WatchWhat.REOPENED: StepState.OPEN,
}


class ChildPane:
    """One child's live area: a status line over its TurnView's output."""

    def __init__(self, settings: Settings, name: str, step: str) -> None:
        import ipywidgets as widgets  # on first use: a widget costs its import only when made

        self.name, self.step, self.state = name, step, "starting"
        self.status = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([self.status, self.output])
        sink = OutputSink(self.output)
        self.view = TurnView(settings, sink.show, sink.live)
        self.set_state("starting")

    def set_state(self, state: str) -> None:
        self.state = state
        self.status.value = (
            f"<b>{esc(self.name)}</b> · {esc(self.step)} · <code>{esc(state)}</code>"
        )

    def __call__(self, event: core.Event) -> None:
        if isinstance(event, core.TurnStarted):
            self.view.restart()  # each step's turn shows its own usage, not the last one's
        self.view(event)
        match event:
            case core.ToolCalled(tool=tool):
                self.set_state(f"running {tool}")
            case core.TextDelta():
                self.set_state("writing")
            case core.TurnEnded(interrupted=interrupted, error=error):
                self.view.finish()
                self.set_state("interrupted" if interrupted else "failed" if error else "idle")


class ParallelRunView:
    """The live area of a parallel run (see the module docstring)."""

    def __init__(self, settings: Settings, runtime: NotebookRuntime, record: Any) -> None:
        import ipywidgets as widgets  # on first use: a widget costs its import only when made

        self.settings, self.runtime, self.record = settings, runtime, record
        self.status = widgets.HTML(f"<b>ollie</b> working plan {record.number} in parallel …")
        self.stop_button = widgets.Button(description="Stop", icon="stop", button_style="warning")
        self.stop_button.on_click(lambda _: self.stop())
        self.graph = PlanGraphView(record, {}, rankdir=settings.rankdir)
        self.graph_html = widgets.HTML(self.graph.html())
        self.tabs = widgets.Tab()
        self.log = widgets.Output()
        self.widget = widgets.VBox(
            [widgets.HBox([self.status, self.stop_button]), self.graph_html, self.tabs, self.log]
        )
        self.panes: dict[str, ChildPane] = {}
        self.workers: dict[str, str] = {}  # step id -> child
        self.events: queue.Queue[tuple[str, core.Event]] = queue.Queue()
        self.result: Any = None

    def post_run(self, event: core.Event) -> None:
        """The run's sink (the core's loop thread)."""
        self.events.put(("", event))

    def post_child(self, name: str, event: core.Event) -> None:
        """The children's sink (the core's loop thread)."""
        self.events.put((name, event))

    def tick(self) -> None:
        """Render what came (the kernel thread); a rendering bug is shown, never raised."""
        try:
            while True:
                try:
                    name, event = self.events.get_nowait()
                except queue.Empty:
                    break
                self._render(name, event)
            for pane in self.panes.values():
                pane.view.tick()
        except Exception as exc:
            OutputSink(self.log).show(NoticeView(f"rendering failed: {exc}", "error"))

    def _render(self, name: str, event: core.Event) -> None:
        if name:
            pane = self.panes.get(name)
            if pane is not None:
                pane(event)
            return
        if isinstance(event, core.WatchNotice):
            self._on_run_notice(event)

    def _on_run_notice(self, notice: core.WatchNotice) -> None:
        what, step_id = notice.what, notice.step_id
        if what is WatchWhat.CLAIMED and notice.child:
            self._add_pane(notice.child, step_id)
        if step_id and what in RUN_STATES:
            self.graph.statuses[step_id] = RUN_STATES[what]
            self.graph.groups = dict(self.workers)
            self.graph_html.value = self.graph.html()
        if what not in (WatchWhat.CLAIMED, WatchWhat.DONE, WatchWhat.FINISHED):
            OutputSink(self.log).show(NoticeView(notice.text, LEVELS.get(what, "info")))

    def _add_pane(self, child: str, step_id: str) -> None:
        index = self.record.ids.index(step_id)
        self.workers[step_id] = child
        step = f"step {index + 1}: {self.record.steps[index].title}"
        if child in self.panes:  # a worker free again takes the next step in its own tab
            pane = self.panes[child]
            pane.step = step
            pane.set_state("starting")
            return
        pane = ChildPane(self.settings, child, step)
        self.panes[child] = pane
        self.tabs.children = (*self.tabs.children, pane.widget)
        self.tabs.set_title(len(self.tabs.children) - 1, child)

    def finish(self, result: Any, table: bool = False) -> None:
        """The run is over: final graph, status line, the Stop button off.

        With `table` (the summary table follows, titled with the summary) the status line
        only says the run is over, so the summary is shown once.
        """
        self.tick()
        self.result = result
        self.stop_button.disabled = True
        self.stop_button.button_style = ""
        if result is not None:
            self.graph.statuses.update(result.states or result.outcome)
            self.graph.groups = dict(result.workers)
            self.graph.spend = dict(result.spend)
            self.graph_html.value = self.graph.html()
            over = f"parallel run of plan {self.record.number} over; its steps are below"
            self.status.value = f"<b>ollie</b> {esc(over if table else result.summary)}"

    def stop(self) -> None:
        """The Stop button: the run and every child end."""
        self.runtime.interrupt()
        self.status.value = "<b>ollie</b> stopping …"

    def summary(self) -> Table:
        """The run as a deterministic table: step, title, worker, status (from the store),
        and the tokens and cost its worker used."""
        result = self.result
        rows = []
        for index, step_id in enumerate(self.record.ids):
            child = result.workers.get(step_id, "") if result else ""
            state = result.states.get(step_id, result.outcome.get(step_id)) if result else None
            status = state_label(state) if state is not None else "not started" if result else ""
            spent = result.spend.get(step_id) if result else None
            tokens, cost = (f"{spent.tokens:,}", spent.cost_text) if spent else ("", "")
            title = self.record.steps[index].title[:50]
            rows.append((index + 1, title, child, status, tokens, cost))
        title = result.headline if result else f"plan {self.record.number}"
        return Table(title, ["step", "title", "worker", "status", "tokens", "cost"], rows)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):
            bundle["text/plain"] = f"ollie: parallel run of plan {self.record.number}"
        return bundle


def run_parallel(
    settings: Settings, runtime: NotebookRuntime, width: int, background: bool, ask: bool = False
) -> Any:
    """Start the run with the widget as its sinks; wait for it unless `background`; `ask`:
    a reached spend cap asks the task store's inbox while this run works."""
    record = runtime.call(_on_loop(lambda: runtime.core.plans.find(None)))
    if record is None:
        return NoticeView("there is no plan yet: ask for one first", "error")
    view = ParallelRunView(settings, runtime, record)
    runtime.call(_on_loop(lambda: runtime.core.subagents.listeners.append(view.post_child)))
    future = runtime.submit(lambda: _asking(runtime.core, ask, width, view))
    done = lambda f: runtime.call_soon(lambda: _unlisten(runtime.core, view))  # noqa: E731
    future.add_done_callback(done)
    if background:
        _tick_in_background(view, future)
        return view
    display(view)
    try:
        result = runtime.pump(future, tick=view.tick)
    except KeyboardInterrupt:
        runtime.interrupt()
        result = runtime.pump(future, timeout=5)
    except OllieUsageError as exc:  # no plan to run in parallel, a run under way
        view.finish(None)
        return NoticeView(str(exc), "error")
    view.finish(result, table=True)
    return view.summary()


async def _asking(core: Any, ask: bool, width: int, view: ParallelRunView) -> Any:
    """The run, with asking at caps on while it works when `ask`."""
    with core.cap_ask.during(ask):
        return await core.runs.run_plan(width, on_event=view.post_run)


def _on_loop(fn: Any) -> Any:
    """`fn` as the coroutine function `runtime.call` runs on the loop, where the core lives."""

    async def run() -> Any:
        return fn()

    return run


def _unlisten(core: Any, view: ParallelRunView) -> None:
    if view.post_child in core.subagents.listeners:
        core.subagents.listeners.remove(view.post_child)


def _tick_in_background(view: ParallelRunView, future: Any) -> None:
    """Render the run while the kernel is free; its sub-agents' approval requests are
    shown (in the run's log) as they come, as a background turn's are."""
    loop = asyncio.get_event_loop()
    show = view.runtime.show = OutputSink(view.log).show

    def tick() -> None:
        view.runtime.drain()
        view.tick()
        if not future.done():
            loop.call_later(TICK, tick)
            return
        failed = future.cancelled() or future.exception() is not None
        view.finish(None if failed else future.result())
        if view.runtime.show is show:  # later requests are not this run's
            view.runtime.show = None

    loop.call_later(TICK, tick)
