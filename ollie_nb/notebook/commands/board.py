"""`%ollie board`: a live board of the task store's plans (docs/BOARD.md)."""

from __future__ import annotations

import concurrent.futures
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ollie_nb.notebook._context import CommandContext
from ollie_nb.notebook._display import NoticeView
from ollie_nb.notebook.commands._args import CommandParser
from ollie_nb.notebook.commands._registry import COMMANDS

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore
    from ollie_nb.core._board_feed import Board, BoardFeed
    from ollie_nb.planning import StepState
    from ollie_nb.planning._board import BoardFilter

BOARD_STATES = ("open", "in_progress", "done", "failed", "cancelled", "deferred")


@COMMANDS.command(
    "board [--goal ID] [--mine [NAME]] [--status S[,S]] [--side]",
    "a live board of the task store: every plan's graph, who holds each step, its lease",
    words=("--goal", "--mine", "--status", "--side"),
)
def cmd_board(ctx: CommandContext, rest: str) -> Any:
    parser = CommandParser("board")
    parser.add_argument("--goal", default="")
    parser.add_argument("--mine", nargs="?", const=True, default=None, metavar="NAME")
    parser.add_argument("--status", default="")
    parser.add_argument("--side", action="store_true")
    args = parser.parse(rest)
    from ollie_nb.notebook._board_widget import BoardView  # anywidget: on first use
    from ollie_nb.planning._board import BoardFilter

    states = board_states(args.status)
    holder = ctx.core_call(lambda core: mine_holder(core, args.mine))
    which = BoardFilter(goal=args.goal.strip().lower(), mine=holder, states=states)
    runtime = ctx.runtime()

    def answer(request: str, word: str) -> concurrent.futures.Future[None]:
        """Answer on the runtime's loop, then have the board read the store again."""

        async def give() -> None:
            await runtime.core.inbox.answer(request, word)
            if view.feed is not None:
                view.feed.refresh()

        return runtime.submit(give)

    view = BoardView(runtime, ctx.settings().rankdir, describe(which), answer)

    async def start(core: AgentCore) -> tuple[BoardFeed, Board]:
        from ollie_nb.core._board_feed import board_feed

        feed, watcher = board_feed(core.servers, which, view.post)
        return feed, await feed.start(watcher)

    feed, first = ctx.core_call(start)
    view.begin(feed, first)
    if args.side:
        return in_side_panel(view)
    return view


async def mine_holder(core: AgentCore, mine: Any) -> str:
    """Whose claims `--mine` means: NAME when given; alone, the user the task server knows
    this kernel's token by (HTTP), else this kernel's agent's name (stdio); '' without it."""
    if mine is None:
        return ""
    if mine is not True:
        return str(mine)
    client = core.servers.task_client if core.servers is not None else None
    return (await client.whoami() if client is not None else "") or core.agent_name


def board_states(status: str) -> frozenset[StepState]:
    """The states `--status S[,S]` names (UsageError naming the unknown ones)."""
    from ollie_nb.planning import StepState

    words = [w.strip() for w in status.split(",") if w.strip()]
    unknown = [w for w in words if w not in BOARD_STATES]
    if unknown:
        raise UsageError(
            f"%ollie board: unknown status {', '.join(unknown)}; give some of {', '.join(BOARD_STATES)}"
        )
    return frozenset(StepState(w) for w in words)


def describe(which: BoardFilter) -> str:
    """What the board shows, in a few words."""
    parts = [f"plan {which.goal}" if which.goal else "every plan"]
    if which.mine:
        parts.append(f"held by {which.mine}")
    if which.states:
        parts.append("with steps " + ", ".join(sorted(s.value for s in which.states)))
    return " ".join(parts)


def in_side_panel(view: Any) -> NoticeView:
    """Show the board in JupyterLab's side area (sidecar); a line says where it went."""
    from IPython.display import display
    from sidecar import Sidecar

    panel = Sidecar(title="ollie board")
    with panel:
        display(view)
    return NoticeView("the board is open in the side panel")
