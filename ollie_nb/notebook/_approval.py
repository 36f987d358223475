"""Approvals in the notebook: a widget that shows a tool call in full and asks Allow / Deny.

A tool outside `trustedTools` asks here before it runs, in a foreground turn (the
widget appears in the cell; clicks are read while the cell waits: on ipykernel 7 the
buttons' comm messages are routed to a subshell of the kernel, whose own thread runs
the click handlers while the cell's thread waits; on ipykernel 6 through
jupyter-ui-poll; on a kernel that can do neither, the answer is typed into an input
box under the widget) and in a background one (the widget appears in the turn's
output). A sub-agent's or the watch's call, where the task store keeps an inbox, is asked
there too (core/_inbox_ask.py): answered there first, the widget closes saying who
answered. The request shows the
tool, its server and every argument in full: code arguments in a code block,
non-printing and bidirectional characters escaped, keys the tool's schema does
not know listed. No answer within `timeout` seconds denies; a run with no one to
answer (nbclient, papermill, nbval: the execute request does not allow stdin) is
denied at once.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import html
import json
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ollie_nb.core import Elsewhere, SharedApprover, Verdict
from ollie_nb.notebook._display import NoticeView

ONCE, SESSION, DENY = "allow once", "allow for this session", "deny"
CODE_KEYS = {"code", "command", "script", "source", "sql", "query", "cmd", "shell", "program"}
TIMER_GRACE = 2.0  # seconds the loop waits past the widget's deny timer before it denies itself
SHOW_CHARS = 20_000  # per argument; the rest is named by a "N more characters" marker
_pending: list[ApprovalWidget] = []
recent: collections.deque[ApprovalWidget] = collections.deque(maxlen=10)
"""The latest approval widgets, newest last (answered or not), for a look at what was asked."""


@dataclass(frozen=True)
class Settled:
    """An answer given elsewhere (the store's inbox) that closes a widget: its answer, why."""

    answer: str
    why: str


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call waiting for a yes or no."""

    tool: str
    server: str
    args: Mapping[str, Any]
    known_keys: frozenset[str] | None = None  # the schema's properties (None: no schema)
    scope: tuple[str, ...] = ()  # the session and agent asking: allowances end with them
    secret_paths: tuple[str, ...] = ()  # where secret-looking values are (shown as ***)

    @property
    def unknown_keys(self) -> list[str]:
        """Argument keys the tool's schema does not list (the server may ignore them)."""
        if self.known_keys is None:
            return []
        return [k for k in self.args if k not in self.known_keys]


def escape_invisible(text: str) -> str:
    """Show control, format (bidi, zero-width) and other non-printing characters as `\\u....`."""
    out = []
    for char in text:
        if char in "\n\t":
            out.append(char)
        elif unicodedata.category(char) in {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)


def shown(text: str, limit: int = SHOW_CHARS) -> str:
    """The text up to `limit` characters, with a visible marker naming what is left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [{len(text) - limit} more characters not shown]"


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)


def request_html(request: ApprovalRequest) -> str:
    """The request as HTML: every untrusted field escaped; code keys first, in code blocks."""
    esc = lambda t: html.escape(escape_invisible(t))  # noqa: E731
    parts = [
        f"<b>ollie wants to run</b> <code>{esc(request.tool)}</code>"
        f" from server <code>{esc(request.server or '?')}</code>"
    ]
    keys = sorted(
        request.args, key=lambda k: (k.lower() not in CODE_KEYS, list(request.args).index(k))
    )
    for key in keys:
        text = esc(shown(_value_text(request.args[key])))
        parts.append(
            f"<div><b>{esc(key)}</b> ({len(_value_text(request.args[key]))} characters):"
            f"<pre style='white-space:pre-wrap;max-height:30em;overflow:auto'>{text}</pre></div>"
        )
    if not request.args:
        parts.append("<div>(no arguments)</div>")
    if request.unknown_keys:
        names = ", ".join(f"<code>{esc(k)}</code>" for k in request.unknown_keys)
        parts.append(f"<div>⚠ keys not in the tool's schema: {names}</div>")
    if request.secret_paths:
        parts.append(f"<div>⚠ {esc(secret_note(request))}</div>")
    return "\n".join(parts)


def secret_note(request: ApprovalRequest) -> str:
    """The warning of a call that would send secret-looking values: where, never what."""
    return (
        f"secret-looking values at {', '.join(request.secret_paths)} (shown as ***): "
        "allowing sends them as they are"
    )


def request_text(request: ApprovalRequest) -> str:
    """The request as plain text (for text frontends and the tool result)."""
    server = escape_invisible(request.server or "?")
    lines = [f"ollie wants to run {escape_invisible(request.tool)} ({server})"]
    for key, value in request.args.items():
        lines.append(f"{escape_invisible(key)}:\n{escape_invisible(shown(_value_text(value)))}")
    if request.unknown_keys:
        unknown = ", ".join(escape_invisible(k) for k in request.unknown_keys)
        lines.append(f"keys not in the tool's schema: {unknown}")
    if request.secret_paths:
        lines.append(escape_invisible(secret_note(request)))
    return "\n".join(lines)


class ApprovalWidget:
    """The request with Allow once / Allow for this session / Deny; `future` gets the answer."""

    def __init__(
        self,
        request: ApprovalRequest,
        timeout: float,
        elsewhere: concurrent.futures.Future[Settled] | None = None,
    ) -> None:
        import ipywidgets as widgets  # on first use: a widget costs its import only when made

        self.request = request
        self.future: concurrent.futures.Future[str] = concurrent.futures.Future()
        # set from the runtime's loop when the inbox answers first; read on the kernel thread
        self.elsewhere: concurrent.futures.Future[Settled] = (
            elsewhere or concurrent.futures.Future()
        )
        self.body = widgets.HTML(request_html(request))
        fit = {"width": "auto"}  # the default 148 px cut "Allow for this session"
        self.buttons = [
            widgets.Button(description="Allow once", button_style="success", layout=fit),
            widgets.Button(description="Allow for this session", layout=fit),
            widgets.Button(description="Deny", button_style="danger", layout=fit),
        ]
        for button, answer in zip(self.buttons, (ONCE, SESSION, DENY)):
            button.on_click(lambda _, a=answer: self.decide(a))
        self.status = widgets.HTML(
            f"waiting for your approval (denied after {timeout:g} s without an answer)"
        )
        self.widget = widgets.VBox([self.body, widgets.HBox([*self.buttons, self.status])])
        _pending.append(self)
        recent.append(self)

    def allow_once(self) -> None:
        self.decide(ONCE)

    def allow_session(self) -> None:
        self.decide(SESSION)

    def deny(self) -> None:
        self.decide(DENY)

    def decide(self, answer: str, why: str = "") -> None:
        """Record the answer (the first one counts) and show it; the buttons go inactive."""
        if self.future.done():
            return
        self.future.set_result(answer)
        if self in _pending:
            _pending.remove(self)
        for button in self.buttons:
            button.disabled = True
        self.status.value = html.escape(f"{answer}{f' ({why})' if why else ''}")

    def settle_elsewhere(self) -> None:
        """On the kernel thread: close with the inbox's answer when it came first."""
        if self.elsewhere.done():
            settled = self.elsewhere.result()
            self.decide(settled.answer, settled.why)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, dict):
            bundle["text/plain"] = request_text(self.request)
        return bundle


def pending() -> list[ApprovalWidget]:
    """The approval widgets waiting for an answer, oldest first."""
    return list(_pending)


def no_one_to_answer() -> bool:
    """True in a run that cannot answer (nbclient, papermill, nbval): stdin is not allowed.

    Jupyter frontends a person uses send `allow_stdin: true` with each execute
    request; batch runners send false. Outside a kernel nobody can click either.
    """
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
    except ImportError:
        return True
    if kernel is None:
        return True
    return not bool(getattr(kernel, "_allow_stdin", False))


def clicks_reach_a_waiting_cell() -> bool:
    """Whether widget clicks can be read while a cell runs on this kernel.

    ipykernel 7 routes a comm's messages to a subshell (`_reply_subshell_for`), which
    runs them on its own thread; ipykernel 6 has `do_one_iteration` for jupyter-ui-poll.
    """
    return _subshells() is not None or _ui_poll_works()


def _kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return getattr(get_ipython(), "kernel", None)


def _ui_poll_works() -> bool:
    try:
        import jupyter_ui_poll  # noqa: F401
    except ImportError:
        return False
    return hasattr(_kernel(), "do_one_iteration")


def _subshells() -> Any:
    """The kernel's shell channel thread when comm messages can be routed to a subshell."""
    kernel = _kernel()
    try:
        from ipykernel.comm.comm import BaseComm
    except ImportError:
        return None
    if not getattr(kernel, "_supports_kernel_subshells", False):
        return None
    thread = getattr(kernel, "shell_channel_thread", None)
    manager = getattr(thread, "manager", None)
    if not hasattr(BaseComm, "_reply_subshell_for") or not hasattr(manager, "_create_subshell"):
        return None
    return thread


_click_subshell: dict[int, str] = {}  # id(kernel) -> the subshell that reads approval clicks


def _approval_subshell(thread: Any) -> str:
    """The subshell that runs approval clicks (made once per kernel, on its shell channel thread)."""
    key = id(_kernel())
    if key not in _click_subshell:
        made: concurrent.futures.Future[str] = concurrent.futures.Future()

        def create() -> None:
            try:
                made.set_result(thread.manager._create_subshell())
            except Exception as exc:
                made.set_exception(exc)

        thread.io_loop.add_callback(create)
        _click_subshell[key] = made.result(timeout=10)
    return _click_subshell[key]


def route_clicks(widget: ApprovalWidget) -> bool:
    """Send the buttons' clicks to the approval subshell (ipykernel 7); False where it cannot."""
    thread = _subshells()
    if thread is None:
        return False
    try:
        subshell = _approval_subshell(thread)
    except Exception:
        return False
    for button in widget.buttons:
        button.comm._reply_subshell_for = lambda data, default, s=subshell: s
    return True


def wait_for_answer(widget: ApprovalWidget, timeout: float) -> None:
    """Block the kernel thread until answered here or in the inbox, or timed out (Ctrl-C
    still reaches it)."""
    deadline = time.monotonic() + timeout
    futures: list[concurrent.futures.Future[Any]] = [widget.future, widget.elsewhere]
    while not any(f.done() for f in futures) and time.monotonic() < deadline:
        left = min(0.1, max(0.0, deadline - time.monotonic()))
        concurrent.futures.wait(futures, timeout=left, return_when="FIRST_COMPLETED")
    widget.settle_elsewhere()


def wait_with_ui(widget: ApprovalWidget, timeout: float) -> None:
    """Block the kernel thread until answered here or in the inbox, or timed out, reading
    widget clicks meanwhile."""
    from jupyter_ui_poll import ui_events  # only a foreground approval needs it

    deadline = time.monotonic() + timeout
    futures = (widget.future, widget.elsewhere)
    with ui_events() as poll:
        while not any(f.done() for f in futures) and time.monotonic() < deadline:
            poll(20)
            time.sleep(0.05)
    widget.settle_elsewhere()


def ask_on_stdin(widget: ApprovalWidget) -> None:
    """A foreground turn on a kernel that cannot read clicks mid-cell: the answer is typed."""
    for button in widget.buttons:
        button.disabled = True
    widget.status.value = "answer in the input box below"
    try:
        typed = input(f"Allow {widget.request.tool}? [o]nce / [s]ession / [N]o: ")
    except (EOFError, RuntimeError, OSError):
        typed = ""
    choice = typed.strip().lower()
    answer = ONCE if choice in ("o", "once", "y", "yes") else DENY
    widget.decide(SESSION if choice in ("s", "session") else answer)


@dataclass
class Approvals(SharedApprover):
    """The notebook's approver: mode (ask/allow/deny), session allowances, the timeout.

    "Allow for this session" allows one tool of one server (`allowed` holds (server,
    tool) pairs) while the request's scope (session and agent) stays; a new scope
    (`%ollie clear`, `%ollie resume`, another agent) starts with none. A call that
    would send secret-looking values always asks, and its answer is for that call only.
    """

    mode: Callable[[], str]
    timeout: Callable[[], float]
    describe: Callable[[str, dict[str, Any]], ApprovalRequest]
    on_main: Callable[[Callable[[], Any]], concurrent.futures.Future[Any]]
    in_foreground: Callable[[], bool]
    show: Callable[[Any], None]
    allowed: set[tuple[str, str]] = field(default_factory=set)
    scope: tuple[str, ...] = ()

    async def __call__(self, name: str, args: dict[str, Any]) -> bool:
        """Ask on the kernel thread; True when the user allowed this call."""
        return (await self._decide(name, args, None)).allowed

    async def ask_beside(self, name: str, args: dict[str, Any], elsewhere: Elsewhere) -> Verdict:
        """Ask on the kernel thread and in the inbox; the first answer wins."""
        return await self._decide(name, args, elsewhere)

    def answer_time(self) -> float:
        return self.timeout()

    async def _decide(
        self, name: str, args: dict[str, Any], elsewhere: Elsewhere | None
    ) -> Verdict:
        """The mode, a session allowance, or a person: here, and in the inbox if given."""
        mode = self.mode()
        if mode != "ask":
            return Verdict(mode == "allow")
        request = self.describe(name, args)
        if request.scope != self.scope:
            self.allowed.clear()
            self.scope = request.scope
        if not request.secret_paths and (request.server, request.tool) in self.allowed:
            return Verdict(True)
        closing: concurrent.futures.Future[Settled] = concurrent.futures.Future()
        if elsewhere is None:
            return Verdict(self._apply(request, await self._local(request, closing)))
        return await self._first(request, closing, elsewhere)

    async def _first(
        self,
        request: ApprovalRequest,
        closing: concurrent.futures.Future[Settled],
        elsewhere: Elsewhere,
    ) -> Verdict:
        """The widget and the inbox asked at once: the first answer counts. An inbox answer
        closes the widget (on the kernel thread) saying who gave it."""
        local = asyncio.ensure_future(self._local(request, closing))
        remote = asyncio.ensure_future(elsewhere())
        try:
            await asyncio.wait({local, remote}, return_when=asyncio.FIRST_COMPLETED)
            found = _verdict_of(remote)
            if found is not None:  # the widget closes as its loop finishes (not awaited)
                answer = ONCE if found.allowed else DENY
                closing.set_result(
                    Settled(answer, f"answered by {found.by or 'someone unnamed'} in the inbox")
                )
                return found
            return Verdict(self._apply(request, await local))
        except asyncio.CancelledError:
            local.cancel()
            raise
        finally:
            remote.cancel()

    async def _local(
        self, request: ApprovalRequest, closing: concurrent.futures.Future[Settled]
    ) -> str:
        """The widget's answer (ONCE, SESSION or DENY), asked on the kernel thread."""
        # A foreground cell waits (and times out) on the kernel thread itself; anything else
        # waits here, also for the kernel thread to take the request (it may never, e.g. under
        # `await agent.aask(...)` with nothing draining).
        limit = None if self.in_foreground() else self.timeout()
        try:
            answer = await asyncio.wait_for(
                asyncio.wrap_future(self.on_main(lambda: self._ask(request, closing))), limit
            )
            if isinstance(answer, concurrent.futures.Future):
                # the widget's own timer denies (and says so in it); this is only a backstop
                limit = self.timeout() + TIMER_GRACE
                answer = await asyncio.wait_for(asyncio.wrap_future(answer), limit)
        except asyncio.TimeoutError:
            answer = DENY
        return str(answer)

    def _ask(self, request: ApprovalRequest, closing: concurrent.futures.Future[Settled]) -> Any:
        """On the kernel thread: deny at once, or show the widget (and wait in a foreground turn)."""
        if closing.done():  # answered in the inbox before the kernel thread got to it
            return closing.result().answer
        if no_one_to_answer():
            self.show(
                NoticeView(
                    f"{request.tool} was denied: no one can answer an approval in this run "
                    "(the execute request does not allow input); add it to trustedTools or "
                    "set %config OllieMagics.approval",
                    "warning",
                )
            )
            return DENY
        widget = ApprovalWidget(request, self.timeout(), closing)
        self.show(widget)
        if self.in_foreground() and route_clicks(widget):
            wait_for_answer(widget, self.timeout())
            widget.decide(DENY, "no answer in time")
            return widget.future.result()
        if self.in_foreground() and not _ui_poll_works():
            ask_on_stdin(widget)  # no timeout there: input() cannot be withdrawn
            return widget.future.result()
        if self.in_foreground():
            wait_with_ui(widget, self.timeout())
            widget.decide(DENY, "no answer in time")
            return widget.future.result()
        timer = _deny_later(widget, self.timeout())
        widget.future.add_done_callback(lambda _: timer.cancel())
        closing.add_done_callback(lambda _: self.on_main(widget.settle_elsewhere))
        return widget.future

    def _apply(self, request: ApprovalRequest, answer: str) -> bool:
        if answer == SESSION and not request.secret_paths:
            self.allowed.add((request.server, request.tool))
        return answer in (ONCE, SESSION)


def _verdict_of(remote: asyncio.Future[Verdict | None]) -> Verdict | None:
    """The inbox's answer once it came; None while it has not (or never will)."""
    if not remote.done() or remote.cancelled() or remote.exception() is not None:
        return None
    return remote.result()


def _deny_later(widget: ApprovalWidget, timeout: float) -> Any:
    loop = asyncio.get_event_loop()
    return loop.call_later(timeout, lambda: widget.decide(DENY, "no answer in time"))
