"""`%ollie watch on`'s widget: the steps the agent works by itself, their replies, a Stop button.

The core calls `post` on its loop thread for each watch event and each event of a
turn it started itself; a periodic callback on the kernel's own loop (between
cells, like BackgroundTurn) renders them into an ipywidgets Output, one TurnView
per turn, so the notebook stays usable while the agent works.
"""

from __future__ import annotations

import asyncio
import queue
from typing import TYPE_CHECKING, Any

from ollie_nb import core
from ollie_nb.core import WatchWhat
from ollie_nb.notebook._display import NoticeView, esc
from ollie_nb.notebook._plans import PlanGraphView
from ollie_nb.notebook._render import Settings, TurnView, turn_label
from ollie_nb.notebook._widgets import OutputSink, _plan_statuses_off_thread, held_plan_review

if TYPE_CHECKING:
    from ollie_nb.notebook._runtime import NotebookRuntime

TICK = 0.1
PLAIN = "ollie: watching task events (steps worked by the agent show in the widget)"
LEVELS = {WatchWhat.FAILED: "warning", WatchWhat.STOPPED: "error"}


class WatchView:
    """The live area of the cell that turned the watch on."""

    def __init__(self, settings: Settings, runtime: NotebookRuntime) -> None:
        import ipywidgets as widgets  # on first use: a widget costs its import only when made

        self.settings = settings
        self.runtime = runtime
        self.status = widgets.HTML("<b>ollie</b> watching task events …")
        self.stop_button = widgets.Button(description="Stop", icon="stop", button_style="warning")
        self.stop_button.on_click(lambda _: self.stop())
        self.output = widgets.Output()
        self.widget = widgets.VBox([widgets.HBox([self.status, self.stop_button]), self.output])
        self.sink = OutputSink(self.output)
        self.events: queue.Queue[core.Event] = queue.Queue()
        self.steps = 0
        self.watching = True
        self._view: Any = None
        self._statuses = _plan_statuses_off_thread(runtime)
        self._loop = asyncio.get_event_loop()

    def post(self, event: core.Event) -> None:
        """The core's sink (called on the runtime's loop thread)."""
        self.events.put(event)

    def begin(self, server: str, mode: str) -> None:
        """The watch is on: say how it listens, and start rendering."""
        self._server, self._mode = server, mode
        self._show_status()
        self._loop.call_later(TICK, self._tick)

    def _show_status(self, state: str = "") -> None:
        how = "on each change signal" if self._mode == "subscribed" else "by polling"
        state = state or f"watching '{esc(self._server)}' {how}"
        self.status.value = f"<b>ollie</b> {state} · {self.steps} steps worked"

    def _tick(self) -> None:
        try:
            self.runtime.drain()  # approval prompts of the agent's own turns
            while True:
                try:
                    self._render(self.events.get_nowait())
                except queue.Empty:
                    break
            if self._view is not None:
                self._view.tick()
                if not self.runtime.core.is_running and self.events.empty():
                    self._view.finish()  # the turns of this wake-up are over
                    self._view = None
        except Exception as exc:  # a rendering bug must not stop the watch's display
            self.sink.show(NoticeView(f"rendering failed: {exc}", "error"))
        if self.watching and self.runtime.core.watch.watcher is None and self.events.empty():
            self._finish("the watch is off")
        if self.watching:
            self._loop.call_later(TICK, self._tick)

    def _render(self, event: core.Event) -> None:
        match event:
            case core.WatchNotice():
                self._on_watch(event)
                return
            case core.TurnStarted():
                if self._view is not None:
                    self._view.finish()
                show, live = self.sink.show, self.sink.live
                review = held_plan_review(self.runtime, self.settings)
                self._view = TurnView(self.settings, show, live, self._statuses, review)
                self.steps += 1
                self._show_status()
                if not event.position:  # TurnView labels the queued ones itself
                    self.sink.show(NoticeView(f"▶ {turn_label(event)[:200]}", "info"))
        if self._view is not None:
            self._view(event)

    def _on_watch(self, notice: core.WatchNotice) -> None:
        self.sink.show(NoticeView(notice.text, LEVELS.get(notice.what, "info")))
        if notice.what is WatchWhat.FINISHED and notice.record is not None:
            graph = PlanGraphView(
                notice.record, dict(notice.statuses), rankdir=self.settings.rankdir
            )
            self.sink.show(graph)
        if notice.what is WatchWhat.STOPPED:
            self._finish("stopped: a turn failed")

    def _finish(self, state: str) -> None:
        self.watching = False
        if self._view is not None:
            self._view.finish()
            self._view = None
        self.stop_button.disabled = True
        self.stop_button.button_style = ""
        self._show_status(state)

    def stop(self) -> None:
        """The Stop button: end the watch (a turn the agent started itself is interrupted)."""
        self.runtime.submit(lambda: self.runtime.core.watch.stop())
        self.status.value = "<b>ollie</b> stopping …"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):
            bundle["text/plain"] = PLAIN
        return bundle
