"""The kernel's own tool servers: notebook-defined tools (`notebook`) and the `python` tools.

Both run user code on the kernel thread through the runtime (as notebook fallbacks
do), so Ctrl-C reaches it and widgets and the namespace are safe to touch. The
notebook tools live in one registry per kernel; every agent of the kernel sees them
(`ollie_nb.tool` and `add_tool`, in `_api`, register them).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from IPython import get_ipython

from ollie_nb.notebook._display import TextBlock
from ollie_nb.tools import NotebookToolServer, PythonServer, Server

if TYPE_CHECKING:
    from ollie_nb.core import AgentConfig
    from ollie_nb.notebook._runtime import NotebookRuntime

_IPYTHON_DIR = os.sep + "IPython" + os.sep
_tools: NotebookToolServer | None = None


def notebook_tools() -> NotebookToolServer:
    """The kernel's registry of notebook-defined tools (created on first use)."""
    global _tools
    if _tools is None:
        _tools = NotebookToolServer()
    return _tools


class KernelWorkbench:
    """The python tools' view of the IPython kernel; every method runs on the kernel thread."""

    def __init__(self, shell: Any, background: Callable[[], Callable[[Any], None] | None]) -> None:
        self.shell = shell
        self.background = background  # a background turn's output sink, None in a foreground turn

    def namespace(self) -> dict[str, Any]:
        return self.shell.user_ns

    def rich(self, value: Any) -> bool:
        """`value` has a rich form (a figure, a data frame): the cell shows it under the call."""
        data, _ = self.shell.display_formatter.format(value)
        return bool(set(data) - {"text/plain"})

    def propose(self, code: str) -> str:
        """A new cell with `code`; where it appears, as the model is told.

        The frontend makes the cell from the reply of the cell that is running. A
        background turn's cell has already replied: the cell comes with the next cell
        the user runs (below that one), and the code is shown in the turn's output now.
        """
        self.shell.set_next_input(code, replace=False)
        sink = self.background()
        if sink is None:
            return "the code is in a new cell below the running one, for the user to run"
        sink(
            TextBlock(
                code, title="proposed code (a new cell with it comes below the next cell you run)"
            )
        )
        return (
            "this turn runs in the background: the code is shown in its output now, and a new "
            "cell with it appears below the next cell the user runs (not below this one)"
        )

    def last_error(self) -> Any:
        value = getattr(sys, "last_value", None)
        if value is None:
            return None
        tb = getattr(sys, "last_traceback", None)
        while tb is not None and _IPYTHON_DIR in tb.tb_frame.f_code.co_filename:
            tb = tb.tb_next  # IPython's own frames around the cell
        return type(value), value, tb


def kernel_servers(
    shell: Any, runtime: Callable[[], NotebookRuntime]
) -> Callable[[AgentConfig], Mapping[str, Server]]:
    """The extra built-in servers of the kernel's agent, as a function of its agent config.

    `shell` None means the running IPython shell, if any (no shell: no python tools).
    """
    if shell is None:
        shell = get_ipython()

    async def run_sync(fn: Callable[[], Any]) -> Any:
        return await runtime().run_on_main(fn)

    async def run_users(fn: Callable[[], Any]) -> Any:
        return await runtime().run_on_main(fn, users=True)

    tools = notebook_tools()
    bench = KernelWorkbench(shell, lambda: runtime().show)
    python = PythonServer(bench, run_sync) if shell is not None else None

    def servers(config: AgentConfig) -> Mapping[str, Server]:
        tools.run_sync = run_users  # the newest runtime of the kernel runs them
        if python is None:
            return {"notebook": tools}
        python.agent_enables = config.python_exec
        return {"notebook": tools, "python": python}

    return servers
