"""ipywidgets views: background turns with a Stop button, and a plan graph that refreshes itself.

Both are driven by a periodic callback on the kernel's own event loop, which
runs between cells, so the kernel stays free while the agent works.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ollie_nb import core
from ollie_nb.notebook._display import NoticeView, esc
from ollie_nb.notebook._render import Settings, TurnView

if TYPE_CHECKING:
    from ollie_nb.notebook._plans import PlanGraphView
    from ollie_nb.notebook._runtime import NotebookRuntime
    from ollie_nb.planning import QueuedPrompt, StepState

TICK = 0.1


def _bundle(obj: Any) -> dict[str, Any]:
    data = obj._repr_mimebundle_()
    return {"output_type": "display_data", "data": data, "metadata": {}}


class OutputSink:
    """Appends displayables to an ipywidgets Output, and updates one of them in place."""

    def __init__(self, output: Any) -> None:
        self.output = output

    def show(self, obj: Any) -> None:
        self.output.outputs = (*self.output.outputs, _bundle(obj))

    def live(self, obj: Any) -> Any:
        index = len(self.output.outputs)
        self.show(obj)

        def update(new: Any) -> None:
            outputs = list(self.output.outputs)
            if index < len(outputs):
                outputs[index] = _bundle(new)
                self.output.outputs = tuple(outputs)

        return update


class BackgroundTurn:
    """A turn running while the kernel is free: status line, progress, Stop button, output."""

    def __init__(
        self, settings: Settings, runtime: NotebookRuntime, prompt: str | QueuedPrompt
    ) -> None:
        import ipywidgets as widgets  # on first use: a widget costs its import only when made

        self.runtime = runtime
        self.status = widgets.HTML("<b>ollie</b> starting …")
        self.stop_button = widgets.Button(description="Stop", icon="stop", button_style="warning")
        self.stop_button.on_click(lambda _: self.stop())
        self.progress = widgets.IntProgress(value=0, min=0, max=1, layout={"width": "160px"})
        self.progress.layout.visibility = "hidden"
        self.output = widgets.Output()
        self.widget = widgets.VBox(
            [widgets.HBox([self.status, self.progress, self.stop_button]), self.output]
        )
        sink = OutputSink(self.output)
        statuses = _plan_statuses_off_thread(runtime)
        review = held_plan_review(runtime, settings)
        self.view = TurnView(settings, sink.show, sink.live, statuses, review)
        self.started = time.perf_counter()
        self.future = runtime.start_turn(prompt, self._on_event)
        runtime.show = sink.show  # approval requests appear in this turn's output
        self._loop = asyncio.get_event_loop()
        self._loop.call_later(TICK, self._tick)

    def _on_event(self, event: core.Event) -> None:
        self.view(event)
        self._show_bar(finished=False)
        match event:
            case core.ToolCalled(tool=tool):
                self.status.value = f"<b>ollie</b> running <code>{esc(tool)}</code> …"
            case core.ToolFinished():  # the result goes back to the model: it is its turn
                self.status.value = "<b>ollie</b> waiting for the model …"
            case core.TextDelta():
                self.status.value = "<b>ollie</b> writing …"
            case core.ReasoningDelta():
                self.status.value = "<b>ollie</b> thinking …"

    def _tick(self) -> None:
        """Render what came; when the turn is over, finish, whatever rendering raised."""
        try:
            self.runtime.drain()
            self.view.tick()
        except Exception as exc:  # a rendering bug must not leave the turn looking alive
            OutputSink(self.output).show(NoticeView(f"rendering failed: {exc}", "error"))
        if not self.future.done():
            self._loop.call_later(TICK, self._tick)
            return
        try:
            self.runtime.drain()
            self.view.finish()
        finally:
            self._finish()

    def _finish(self) -> None:
        """The final status line; the Stop button is disabled and no longer coloured."""
        self.stop_button.disabled = True
        self.stop_button.button_style = ""
        seconds = time.perf_counter() - self.started
        state = "interrupted" if self.view.interrupted else "done"
        if self.future.cancelled() or self.future.exception() is not None:
            state = "failed"
            error = "cancelled" if self.future.cancelled() else str(self.future.exception())
            OutputSink(self.output).show(NoticeView(error, "error"))
        self.status.value = f"<b>ollie</b> {esc(self.view.header(state, seconds))}"
        self._show_bar(finished=True)

    def _show_bar(self, finished: bool) -> None:
        """The bar: how far the worked plan is (else the place in the drained queue)."""
        bar = self.view.bar(finished)
        if bar is not None:
            self.progress.max, self.progress.value = max(1, bar[1]), bar[0]
            self.progress.layout.visibility = "visible"

    def stop(self) -> None:
        """Interrupt the turn (the Stop button)."""
        self.runtime.interrupt()
        self.status.value = "<b>ollie</b> stopping …"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):
            bundle["text/plain"] = "ollie: background turn (output in the widget)"
        return bundle


def held_plan_review(runtime: NotebookRuntime, settings: Settings) -> Any:
    """What a turn's view shows for a plan held for review: its editor, acting on `runtime`."""
    from ollie_nb.notebook._plan_editor import held_plan_editor

    def editor(record: Any) -> Any:
        follow = lambda: review_turn(runtime, settings, record.number)  # noqa: E731
        return held_plan_editor(runtime, record, settings.rankdir, follow)

    return editor


def review_turn(runtime: NotebookRuntime, settings: Settings, number: int) -> Any:
    """The prompt a review of plan `number` queued, run as a background turn (called on the
    kernel thread after a click); None while another turn runs (it is worked after it)."""
    if runtime.busy:
        return None
    item = runtime.submit(_on_loop(lambda: runtime.core.plans.take_prompt(number))).result(10)
    return None if item is None else BackgroundTurn(settings, runtime, item)


def _on_loop(fn: Any) -> Any:
    async def run() -> Any:
        return fn()

    return run


def _plan_statuses_off_thread(runtime: NotebookRuntime) -> Any:
    """Plan statuses for a background view: read on the loop, never blocking the kernel."""
    cache: dict[int, dict[str, StepState]] = {}

    def statuses(record: Any) -> dict[str, StepState]:
        future = runtime.submit(lambda: runtime.core.plans.statuses(record))
        future.add_done_callback(
            lambda f: cache.__setitem__(record.number, f.result()) if not f.exception() else None
        )
        return cache.get(record.number, {})

    return statuses


class PlanWatch:
    """A plan graph that re-reads its step statuses every `interval` seconds until all are done."""

    def __init__(self, runtime: NotebookRuntime, view: PlanGraphView, interval: float) -> None:
        import ipywidgets as widgets  # on first use: a widget costs its import only when made

        self.runtime = runtime
        self.view = view
        self.interval = max(0.5, interval)
        self.html = widgets.HTML(view.html(), layout=widgets.Layout(width="100%"))
        self.label = widgets.HTML("")
        self.stop_button = widgets.Button(description="Stop watching", icon="eye-slash")
        self.stop_button.on_click(lambda _: self.stop())
        self.widget = widgets.VBox(
            [self.html, widgets.HBox([self.label, self.stop_button])],
            layout=widgets.Layout(width="100%"),
        )
        self.watching = True
        self._pending: Any = None
        self._loop = asyncio.get_event_loop()
        self._loop.call_later(self.interval, self._tick)
        self._show_progress()

    def _show_progress(self) -> None:
        done, total = self.view.progress()
        self.label.value = f"watching: {done} of {total} steps done"

    def _tick(self) -> None:
        if not self.watching:
            return
        if self._pending is not None and self._pending.done():
            if self._pending.exception() is None:
                statuses = self._pending.result()
                if statuses != self.view.statuses:
                    self.view.statuses = statuses
                    self.html.value = self.view.html()
                self._show_progress()
            self._pending = None
            done, total = self.view.progress()
            if done == total:
                self.watching = False
                self.stop_button.disabled = True
                self.label.value = f"all {total} steps done"
                return
        if self._pending is None:
            record = self.view.record
            self._pending = self.runtime.submit(lambda: self.runtime.core.plans.statuses(record))
        self._loop.call_later(self.interval, self._tick)

    def stop(self) -> None:
        self.watching = False
        self.stop_button.disabled = True
        self.label.value = "stopped watching"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):
            bundle["text/plain"] = self.view.text()
        return bundle
