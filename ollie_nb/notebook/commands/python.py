"""`%ollie python on|off`: offer or withdraw `python_exec` (code run in the kernel's namespace)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ollie_nb.notebook._context import CommandContext
from ollie_nb.notebook._display import NoticeView
from ollie_nb.notebook.commands._args import words_of
from ollie_nb.notebook.commands._registry import COMMANDS

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore


@COMMANDS.command(
    "python [on|off]",
    "offer python_exec to the agent (it still asks before each run unless trusted)",
    words=("on", "off"),
)
def cmd_python(ctx: CommandContext, rest: str) -> NoticeView:
    words = words_of(rest, "python", most=1, usage="python [on|off]")
    if words and words[0] not in ("on", "off"):
        raise UsageError(f"%ollie python: say on or off, not {words[0]!r}")
    wanted = None if not words else words[0] == "on"

    async def apply(core: AgentCore) -> bool | None:
        from ollie_nb.tools import PythonServer  # loaded with the core, on the loop

        server = core.servers.dispatcher.get_server("python") if core.servers else None
        if not isinstance(server, PythonServer):
            return None
        if wanted is not None:
            server.override = wanted
            await core.refresh_tools()
        return server.exec_on

    state = ctx.core_call(apply)
    if state is None:
        raise UsageError("%ollie python: this agent has no python tools (no IPython shell)")
    if state:
        return NoticeView(
            "python_exec: on (each run asks for approval unless trustedTools names it)"
        )
    return NoticeView("python_exec: off (python_vars, python_propose, python_last_error stay)")
