"""The kernel's runtime: one asyncio loop in a daemon thread that owns the AgentCore.

The loop thread does LLM streaming, tool dispatch and MCP I/O and never touches
IPython display state. The kernel (main) thread submits work, pumps a
thread-safe queue of events and renders them, and runs user callbacks (a
notebook-defined PlanBackend, approval prompts) that the loop hands back, so
user code runs where the user's code always runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ollie_nb.errors import NotStartedError
from ollie_nb.notebook._failures import remember

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore, Event, TurnResult
    from ollie_nb.planning import QueuedPrompt

log = logging.getLogger("ollie_nb.notebook")

T = TypeVar("T")
INTERRUPT_GRACE = 5.0  # seconds the pump waits for a cancelled turn to wind down
TICK = 0.05  # seconds between `tick` calls while a pump waits; a finished call wakes it sooner
_WAKE = object()  # put in the inbox when a pumped future finishes: the pump looks at once


class _MainCall:
    """A callable the loop thread wants run on the kernel thread, with its future.

    `users`: the callable is the user's own code (a fallback, a notebook tool); when it
    raises, its traceback is kept for `%ollie debug` (the core reports it in words).
    """

    def __init__(self, fn: Callable[[], Any], users: bool = False) -> None:
        self.fn = fn
        self.users = users
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            self.future.set_result(self.fn())
        except Exception as exc:  # handed back to the loop thread, raised there
            if self.users:
                remember(exc)
            self.future.set_exception(exc)
        except BaseException as exc:
            # Ctrl-C (or sys.exit) in the user's code. Raised in a task of the loop thread it
            # would stop that event loop for good, wedging every later cell: the loop gets an
            # ordinary error, and Ctrl-C is re-raised here, so the pump interrupts the turn
            # as on any other Ctrl-C.
            self.future.set_exception(RuntimeError(f"interrupted ({type(exc).__name__})"))
            if isinstance(exc, KeyboardInterrupt):
                raise


class NotebookRuntime:
    """Owns the loop thread and the AgentCore; the kernel thread talks to it through here."""

    def __init__(self, core_factory: Callable[[], AgentCore]) -> None:
        self._factory = core_factory
        self.closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="ollie-runtime", daemon=True)
        self._thread.start()
        self._inbox: queue.Queue[Any] = queue.Queue()  # events and _MainCalls for the kernel thread
        self._pumping = threading.Event()
        self.view: Callable[[Event], None] | None = None  # renders the current turn's events
        self.show: Callable[[Any], None] | None = None  # a background turn's output, else None
        self.turn_future: concurrent.futures.Future[TurnResult] | None = None
        self.agent_problem = ""  # why the configured agent did not start (the default did)
        self.core: AgentCore = self.call(self._make_core)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    async def _make_core(self) -> AgentCore:
        return self._factory()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    # -- running things on the loop --------------------------------------------

    def submit(self, fn: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """Schedule `fn()` on the loop thread; returns a thread-safe future."""
        if self.closed:
            raise NotStartedError("the ollie runtime is closed; %load_ext ollie_nb again")

        async def runner() -> T:
            return await fn()

        return asyncio.run_coroutine_threadsafe(runner(), self._loop)

    def call(self, fn: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run `fn()` on the loop and wait, pumping main-thread calls; Ctrl-C cancels it."""
        future = self.submit(fn)
        try:
            return self.pump(future, timeout=timeout)
        except KeyboardInterrupt:
            future.cancel()
            raise

    def call_soon(self, fn: Callable[[], Any]) -> None:
        """Run a plain callable on the loop thread (e.g. `core.interrupt`)."""
        self._loop.call_soon_threadsafe(fn)

    # -- the kernel-thread side ------------------------------------------------

    def post_event(self, event: Event) -> None:
        """The core's event sink: hand the event to the kernel thread (called on the loop)."""
        self._inbox.put(event)

    async def run_on_main(self, fn: Callable[[], T], users: bool = False) -> T:
        """Await `fn()` run on the kernel thread (`users`: the user's code, e.g. a fallback).

        When nothing pumps (a plain script, or the kernel is busy elsewhere) the call
        still happens, on a worker thread, after a short wait.
        """
        call = _MainCall(fn, users)
        self._inbox.put(call)
        wrapped = asyncio.wrap_future(call.future)
        # A turn interrupted just as the answer arrives never reads it; mark it read, or
        # asyncio prints "exception was never retrieved" into the cell.
        wrapped.add_done_callback(_mark_retrieved)
        if not self._pumping.is_set():
            done, _ = await asyncio.wait({wrapped}, timeout=0.5)
            if not done and call.future.cancel():
                return await asyncio.to_thread(fn)
        return await wrapped

    def on_main(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Run `fn()` on the kernel thread when it next pumps or drains (never elsewhere)."""
        call = _MainCall(fn)
        self._inbox.put(call)
        return call.future

    @property
    def pumping(self) -> bool:
        """True while a foreground cell waits in `pump` (the kernel thread is ours)."""
        return self._pumping.is_set()

    def pump(
        self,
        future: concurrent.futures.Future[T],
        timeout: float | None = None,
        tick: Callable[[], None] | None = None,
    ) -> T:
        """Render events and run main-thread calls until `future` is done."""
        deadline = None if timeout is None else time.monotonic() + timeout
        future.add_done_callback(self._wake)
        self._pumping.set()
        try:
            while True:
                self.drain()
                if future.done():
                    self.drain()
                    return future.result()
                if tick is not None:
                    tick()
                if deadline is not None and time.monotonic() > deadline:
                    future.cancel()
                    raise TimeoutError("the ollie runtime did not answer in time")
                try:
                    item = self._inbox.get(timeout=TICK)
                except queue.Empty:
                    continue
                self._handle(item)
        finally:
            self._pumping.clear()

    def _wake(self, _future: concurrent.futures.Future[Any]) -> None:
        """A pumped future finished (on any thread): wake the pump waiting on the inbox."""
        self._inbox.put(_WAKE)

    def drain(self) -> int:
        """Handle whatever is waiting in the inbox now; return how many items."""
        count = 0
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return count
            self._handle(item)
            count += 1

    def _handle(self, item: Any) -> None:
        if item is _WAKE:
            return
        if isinstance(item, _MainCall):
            item.run()
        elif self.view is not None:
            try:
                self.view(item)
            except Exception:
                log.exception("rendering an event failed")

    # -- turns -----------------------------------------------------------------

    def start_turn(
        self, prompt: str | QueuedPrompt, view: Callable[[Event], None] | None
    ) -> concurrent.futures.Future[TurnResult]:
        """Start a turn on the loop; its events go to `view` on the kernel thread."""
        self.view = view
        self.show = None
        future = self.submit(lambda: self.core.submit(prompt, self.post_event))
        self.turn_future = future
        return future

    def run_turn(
        self,
        prompt: str | QueuedPrompt,
        view: Callable[[Event], None],
        tick: Callable[[], None] | None = None,
    ) -> TurnResult:
        """Run a turn in the foreground; Ctrl-C interrupts it and waits for it to wind down."""
        future = self.start_turn(prompt, view)
        try:
            return self.pump(future, tick=tick)
        except KeyboardInterrupt:
            self.call_soon(self.core.interrupt)
            try:
                return self.pump(future, timeout=INTERRUPT_GRACE)
            except (KeyboardInterrupt, TimeoutError):
                future.cancel()
                raise KeyboardInterrupt from None

    def interrupt(self) -> None:
        """Ask the running turn to stop (from any thread)."""
        self.call_soon(self.core.interrupt)

    @property
    def busy(self) -> bool:
        """A turn runs: one the kernel started, or one the agent started itself (watch on)."""
        started = self.turn_future is not None and not self.turn_future.done()
        return started or self.core.is_running

    def close(self, timeout: float = 10.0) -> None:
        """Stop the turn, close every MCP session, stop the loop thread."""
        if self.closed:
            return
        try:
            future = asyncio.run_coroutine_threadsafe(self.core.aclose(), self._loop)
            future.result(timeout)
        except Exception as exc:
            log.warning("closing the agent: %s", exc)
        finally:
            self.closed = True
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)


def _mark_retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
