"""An approval nobody answers is a No: the kernel thread never takes it, or the widget waits.

The notebook approver (`Approvals`) is driven directly here, with the hand-over to the
kernel thread replaced by futures nobody completes: the two waits the core's loop does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from ollie_nb.core._routing import TrustGate
from ollie_nb.notebook._approval import (
    ONCE,
    SESSION,
    ApprovalRequest,
    Approvals,
    request_html,
    request_text,
)


def approver(on_main) -> Approvals:
    return Approvals(
        mode=lambda: "ask",
        timeout=lambda: 0.2,
        describe=lambda name, args: ApprovalRequest(name, "execute", dict(args)),
        on_main=on_main,
        in_foreground=lambda: False,
        show=lambda obj: None,
    )


@pytest.mark.anyio
async def test_a_request_the_kernel_thread_never_takes_is_denied_after_the_timeout():
    never: concurrent.futures.Future = concurrent.futures.Future()  # the widget is never shown
    approve = approver(lambda fn: never)

    allowed = await asyncio.wait_for(approve("execute_code", {"code": "x"}), 5)
    assert allowed is False and approve.allowed == set()


@pytest.mark.anyio
async def test_a_widget_nobody_answers_is_denied_after_the_timeout():
    shown: concurrent.futures.Future = concurrent.futures.Future()
    unanswered: concurrent.futures.Future = concurrent.futures.Future()
    shown.set_result(unanswered)  # the widget is shown; its answer never comes
    approve = approver(lambda fn: shown)

    allowed = await asyncio.wait_for(approve("execute_code", {"code": "x"}), 5)
    assert allowed is False


@pytest.mark.anyio
async def test_an_answer_that_comes_is_applied():
    shown: concurrent.futures.Future = concurrent.futures.Future()
    answered: concurrent.futures.Future = concurrent.futures.Future()
    answered.set_result(ONCE)
    shown.set_result(answered)
    approve = approver(lambda fn: shown)

    assert await asyncio.wait_for(approve("execute_code", {"code": "x"}), 5) is True


def answering(answer: str):
    """An on_main whose widget is shown and answered `answer` at once; records each request."""
    asked: list[ApprovalRequest] = []

    def on_main(fn):
        shown: concurrent.futures.Future = concurrent.futures.Future()
        answered: concurrent.futures.Future = concurrent.futures.Future()
        answered.set_result(answer)
        shown.set_result(answered)
        return shown

    return asked, on_main


def scoped_approver(answer: str, where: dict) -> tuple[list, Approvals]:
    """An approver whose requests come from `where` (server of each tool, and the scope)."""
    asked, on_main = answering(answer)

    def describe(name, args):
        request = ApprovalRequest(name, where[name], dict(args), scope=where["scope"])
        asked.append(request)
        return request

    approve = Approvals(
        mode=lambda: "ask",
        timeout=lambda: 0.2,
        describe=describe,
        on_main=on_main,
        in_foreground=lambda: False,
        show=lambda obj: None,
    )
    return asked, approve


async def ask(approve: Approvals, name: str) -> bool:
    return await asyncio.wait_for(approve(name, {"path": "x"}), 5)


@pytest.mark.anyio
async def test_allow_for_this_session_is_one_tool_of_one_server_and_ends_with_the_scope():
    """23.10: allowing `write_file` of one server later allowed another server's
    `write_file`, and the allowance outlived `%ollie agent` and `%ollie clear`."""
    where = {"write_file": "local", "remote__write_file": "remote", "scope": ("s1", "a", "")}
    asked, approve = scoped_approver(SESSION, where)
    assert await ask(approve, "write_file") and len(asked) == 1
    assert await ask(approve, "write_file") and len(asked) == 2  # described, then allowed unasked
    approve.on_main = lambda fn: concurrent.futures.Future()  # nobody answers: asking is a No
    where["write_file"] = "remote"  # the same name now routes to another server
    assert not await ask(approve, "write_file")
    assert not await ask(approve, "remote__write_file")
    where["write_file"] = "local"
    assert await ask(approve, "write_file")  # the allowance itself is still there
    where["scope"] = ("s2", "a", "")  # %ollie clear: a new session id
    assert not await ask(approve, "write_file")
    approve.allowed.add(("local", "write_file"))
    where["scope"] = ("s2", "b", "/x/b.json")  # %ollie agent b
    assert not await ask(approve, "write_file") and approve.allowed == set()


@pytest.mark.anyio
async def test_a_call_with_secret_looking_values_is_asked_each_time_and_shows_where():
    _, on_main = answering(SESSION)
    requests: list[ApprovalRequest] = []

    def describe(name, args):
        requests.append(ApprovalRequest(name, "tasks", dict(args), secret_paths=("note",)))
        return requests[-1]

    approve = Approvals(lambda: "ask", lambda: 0.2, describe, on_main, lambda: False, print)
    assert await approve("task_note", {"note": "key ***"})
    assert approve.allowed == set()  # "for this session" is this call only
    html, text = request_html(requests[0]), request_text(requests[0])
    for shown in (html, text):
        assert "secret-looking values at note (shown as ***)" in shown


@pytest.mark.anyio
async def test_an_approval_that_cannot_be_shown_is_a_deny():
    """23.13: the widget never appears (the display fails): the gate denies, the user is told."""

    def on_main(fn):
        failed: concurrent.futures.Future = concurrent.futures.Future()
        failed.set_exception(RuntimeError("no frontend to display in"))
        return failed

    errors: list[str] = []
    gate = TrustGate((), approver(on_main), lambda s: None, on_error=errors.append)
    allowed = await asyncio.wait_for(gate.allows("execute_code", "t", "execute", {}), 5)
    assert allowed is False
    assert errors == ["approval callback failed: RuntimeError: no frontend to display in"]
