"""`%ollie inbox`: the requests that wait on a person in the task store's inbox, and answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ollie_nb.errors import TaskServerError  # the planning package loads with the first agent
from ollie_nb.notebook._context import CommandContext
from ollie_nb.notebook._display import Displayable, NoticeView, Table
from ollie_nb.notebook.commands._args import CommandParser
from ollie_nb.notebook.commands._registry import COMMANDS

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore
    from ollie_nb.planning import InboxRequest

command = COMMANDS.command

USAGE = "inbox [answer ID allow|deny|stop|raise:N [--by NAME]]"
WHAT_SHOWN = 120  # characters of a request's text in the table


@command(USAGE, "what waits on a person in the task store's inbox; answer one", words=("answer",))
def cmd_inbox(ctx: CommandContext, rest: str) -> Displayable:
    words = rest.split()
    if words and words[0] == "answer":
        return _answer(ctx, rest.split(None, 1)[1] if len(words) > 1 else "")
    if words:
        raise UsageError(f"%ollie inbox: use '%ollie {USAGE}'")

    async def listing(core: AgentCore) -> list[InboxRequest] | TaskServerError:
        try:
            return await core.inbox.open()
        except TaskServerError as exc:
            return exc

    found = ctx.core_call(listing)
    if isinstance(found, TaskServerError):
        return NoticeView(str(found), "error")
    return Table(
        "inbox: open requests",
        ["id", "kind", "asks", "what", "plan", "step", "until"],
        [_row(r) for r in found],
        footer="answer with %ollie inbox answer ID allow|deny" if found else "",
        empty="(nothing waits on an answer)",
    )


def _row(request: InboxRequest) -> list[str]:
    what = " ".join(request.what.split())[:WHAT_SHOWN]
    return [
        request.id,
        request.kind,
        request.asker,
        what,
        request.goal,
        request.step,
        request.deadline,
    ]


def _answer(ctx: CommandContext, rest: str) -> Displayable:
    """`%ollie inbox answer ID ANSWER [--by NAME]`: one answer, recorded with who gave it."""
    parser = CommandParser("inbox answer")
    parser.add_argument("id")
    parser.add_argument("answer")
    parser.add_argument("--by", default="")
    args = parser.parse(rest)

    async def answer(core: AgentCore) -> TaskServerError | None:
        try:
            await core.inbox.answer(args.id, args.answer, args.by)
        except TaskServerError as exc:
            return exc
        return None

    refused = ctx.core_call(answer)
    if refused is not None:
        return NoticeView(str(refused), "error")
    return NoticeView(f"answered {args.id}: {args.answer}")
