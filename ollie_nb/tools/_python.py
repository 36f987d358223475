"""PythonServer: the `python_*` tools that let the agent work in the kernel's own namespace.

`python_vars` lists variables, `python_exec` runs code there (off unless enabled,
never trusted by default), `python_propose` puts code into a new cell for the user,
`python_last_error` reads the notebook's last exception. The kernel itself is reached
through a `Workbench`, whose methods run where `run_sync` puts them (the kernel thread).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Protocol

from ollie_nb.redaction import redact
from ollie_nb.tools._notebook import SyncRunner, run_here
from ollie_nb.tools._pyexec import OUTPUT_CAP, error_text, run_code
from ollie_nb.tools._pyvars import list_vars
from ollie_nb.tools._types import ToolInfo, ToolResult, Trust

SERVER_NAME = "python"
ENABLE_HINT = 'python_exec is off: `%ollie python on` or the agent file\'s "python": {"exec": true} enables it'

READ_ONLY = frozenset({"python_vars", "python_last_error"})
"""The python tools that only read the kernel: identical calls of one response run once."""

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class Workbench(Protocol):
    """The kernel the python tools work in; `run_sync` calls these on the kernel thread."""

    def namespace(self) -> dict[str, Any]: ...  # exec needs a dict for its globals

    def rich(self, value: Any) -> bool: ...  # the value has a rich form (a figure, a frame)

    def propose(self, code: str) -> str | None: ...  # a new cell; returns where it appears

    def last_error(self) -> ExcInfo | None: ...


_CODE = {"type": "string", "description": "Python source."}
TOOLS = {
    "python_vars": (
        "List the notebook's variables with their type and a short summary (shape and "
        "columns of data frames, lengths, cut reprs). Read-only.",
        {"type": "object", "properties": {}},
    ),
    "python_exec": (
        "Run Python code in the notebook's namespace (the user's variables are there, and "
        "what you define stays). Returns stdout, the value of a last expression, any error.",
        {"type": "object", "properties": {"code": _CODE}, "required": ["code"]},
    ),
    "python_propose": (
        "Put code into a new notebook cell below for the user to read, change and run. "
        "Nothing runs now.",
        {
            "type": "object",
            "properties": {
                "code": _CODE,
                "note": {"type": "string", "description": "One line for the user: what it does."},
            },
            "required": ["code"],
        },
    ),
    "python_last_error": (
        "The last exception raised in a notebook cell, with its traceback.",
        {"type": "object", "properties": {}},
    ),
}


class PythonServer:
    """The `python` server over one kernel; `exec_on` says whether python_exec is offered.

    Like the notebook server it outlives agent envs (`aclose` keeps its state). The
    agent file's `"python": {"exec": true}` sets `agent_enables`; `%ollie python on|off`
    sets `override`, which wins until set back to None.
    """

    def __init__(
        self, bench: Workbench, run_sync: SyncRunner = run_here, *, output_cap: int = OUTPUT_CAP
    ) -> None:
        self.bench = bench
        self.run_sync = run_sync
        self.output_cap = output_cap
        self.agent_enables = False
        self.override: bool | None = None

    @property
    def exec_on(self) -> bool:
        return self.agent_enables if self.override is None else self.override

    def tool_trust(self, tool: str) -> Trust:
        """python_exec runs only when trustedTools names it or someone approves; the rest is read-only."""
        return Trust.LISTED if tool == "python_exec" else Trust.DEFAULT

    async def list_tools(self) -> list[ToolInfo]:
        return [
            ToolInfo(SERVER_NAME, name, description, schema, read_only=name in READ_ONLY)
            for name, (description, schema) in TOOLS.items()
            if name != "python_exec" or self.exec_on
        ]

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        code = args.get("code")
        if name in ("python_exec", "python_propose") and not isinstance(code, str):
            return ToolResult.error(f"{name} needs 'code': a string of Python source")
        if name == "python_vars":
            return ToolResult(await self.run_sync(lambda: list_vars(self.bench.namespace())))
        if name == "python_exec":
            if not self.exec_on:
                return ToolResult.error(ENABLE_HINT)
            assert isinstance(code, str)  # checked above for python_exec and python_propose
            return await self.run_sync(lambda: self._exec(code))
        if name == "python_propose":
            assert isinstance(code, str)  # checked above
            note = args.get("note")
            text = f"# {' '.join(note.split())}\n{code}" if isinstance(note, str) and note else code
            where = await self.run_sync(lambda: self.bench.propose(text))
            return ToolResult(f"{where or 'the code is in a new cell below the running one'}")
        if name == "python_last_error":
            info = await self.run_sync(self.bench.last_error)
            return ToolResult(error_text(*info) if info else "no exception in this notebook yet")
        return ToolResult.error(f"unknown tool {name!r}; this server has {', '.join(TOOLS)}")

    def _exec(self, code: str) -> ToolResult:
        run = run_code(code, self.bench.namespace(), self.output_cap)
        shown: tuple[Any, ...] = ()
        if run.has_value and self.bench.rich(run.value):
            run.output += "(the value is shown in the notebook)\n"
            shown = (run.value,)  # under the call's line, once it is answered
        # values of secret names and key formats hidden, as python_vars hides them
        return ToolResult(redact(run.text()), is_error=bool(run.error), shown=shown)

    async def aclose(self) -> None:
        return None  # the kernel's namespace outlives agent envs
