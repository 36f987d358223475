"""An approval nobody answers is a No: the kernel thread never takes it, or the widget waits.

The notebook approver (`Approvals`) is driven directly here, with the hand-over to the
kernel thread replaced by futures nobody completes: the two waits the core's loop does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

from ollie_nb.notebook._approval import ONCE, ApprovalRequest, Approvals


def approver(on_main) -> Approvals:
    return Approvals(
        mode=lambda: "ask",
        timeout=lambda: 0.2,
        describe=lambda name, args: ApprovalRequest(name, "execute", dict(args)),
        on_main=on_main,
        in_foreground=lambda: False,
        show=lambda obj: None,
    )


def test_a_request_the_kernel_thread_never_takes_is_denied_after_the_timeout():
    never: concurrent.futures.Future = concurrent.futures.Future()  # the widget is never shown
    approve = approver(lambda fn: never)

    allowed = asyncio.run(asyncio.wait_for(approve("execute_code", {"code": "x"}), 5))
    assert allowed is False and approve.allowed == set()


def test_a_widget_nobody_answers_is_denied_after_the_timeout():
    shown: concurrent.futures.Future = concurrent.futures.Future()
    unanswered: concurrent.futures.Future = concurrent.futures.Future()
    shown.set_result(unanswered)  # the widget is shown; its answer never comes
    approve = approver(lambda fn: shown)

    allowed = asyncio.run(asyncio.wait_for(approve("execute_code", {"code": "x"}), 5))
    assert allowed is False


def test_an_answer_that_comes_is_applied():
    shown: concurrent.futures.Future = concurrent.futures.Future()
    answered: concurrent.futures.Future = concurrent.futures.Future()
    answered.set_result(ONCE)
    shown.set_result(answered)
    approve = approver(lambda fn: shown)

    assert asyncio.run(asyncio.wait_for(approve("execute_code", {"code": "x"}), 5)) is True
