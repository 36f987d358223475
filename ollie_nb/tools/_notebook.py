"""NotebookToolServer: plain Python functions of the notebook as tools of its agent.

The schema comes from the function's type hints through the MCP SDK's own function
metadata (pydantic under the hood), the description from its docstring; arguments
are validated before the call. Sync functions run through the `run_sync` callable the
frontend gives (the notebook: the kernel thread), async ones on the caller's loop.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ollie_nb.tools._dispatcher import exc_summary
from ollie_nb.tools._types import ToolInfo, ToolResult, Trust

if TYPE_CHECKING:
    from pydantic import ValidationError

SERVER_NAME = "notebook"
_VALID_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_ERRORS = 5  # validation errors listed for the model per call

R = TypeVar("R")


class SyncRunner(Protocol):
    """Runs a plain callable where user code belongs and awaits its result."""

    def __call__(self, fn: Callable[[], R], /) -> Awaitable[R]: ...


async def run_here(fn: Callable[[], R]) -> R:
    """The default SyncRunner: call it right here (a script has no kernel thread)."""
    return fn()


@dataclass(frozen=True)
class NotebookTool:
    """One registered function: its tool name, schema, validator, whether it is trusted and
    whether it must run alone (never beside another call of the same response)."""

    name: str
    fn: Callable[..., Any]
    description: str
    input_schema: dict[str, Any]
    meta: Any  # mcp's FuncMetadata: the pydantic argument model
    trusted: bool
    is_async: bool
    sequential: bool = False

    @classmethod
    def build(
        cls, fn: Callable[..., Any], name: str | None, trusted: bool, sequential: bool = False
    ) -> NotebookTool:
        """Describe `fn` as a tool; a bad name or signature raises ValueError."""
        from mcp.server.mcpserver.exceptions import InvalidSignature
        from mcp.server.mcpserver.utilities.func_metadata import func_metadata

        if not callable(fn):
            raise TypeError(f"a tool must be a function, got {type(fn).__name__}")
        fn_name: str = getattr(fn, "__name__", "")  # checked with the name below
        tool_name = name or fn_name
        if not _VALID_NAME.fullmatch(tool_name or ""):
            raise ValueError(
                f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-' (give name=...)"
            )
        try:
            meta = func_metadata(fn, structured_output=False)
            schema = meta.arg_model.model_json_schema(by_alias=True)
        except (InvalidSignature, TypeError, ValueError) as exc:
            raise ValueError(f"tool {tool_name}: cannot describe its arguments: {exc}") from None
        schema.pop("title", None)
        return cls(
            name=tool_name,
            fn=fn,
            description=inspect.getdoc(fn) or f"The notebook function {tool_name}.",
            input_schema=schema,
            meta=meta,
            trusted=trusted,
            is_async=inspect.iscoroutinefunction(inspect.unwrap(fn)),
            sequential=sequential,
        )

    def info(self) -> ToolInfo:
        return ToolInfo(
            SERVER_NAME, self.name, self.description, self.input_schema, self.sequential
        )


class NotebookToolServer:
    """The `notebook` server: tools registered from notebook code, replaced by name on re-run.

    It belongs to the notebook, not to one agent env: `aclose` keeps the tools, so an
    agent switch (which closes the env's servers) finds them again.
    """

    def __init__(self, run_sync: SyncRunner = run_here) -> None:
        self.run_sync = run_sync
        self._tools: dict[str, NotebookTool] = {}

    def __repr__(self) -> str:
        return f"NotebookToolServer({', '.join(self._tools) or 'no tools'})"

    def add(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        trusted: bool = True,
        sequential: bool = False,
    ) -> str:
        """Register (or replace) `fn` as a tool; returns its tool name."""
        tool = NotebookTool.build(fn, name, trusted, sequential)
        self._tools[tool.name] = tool
        return tool.name

    def remove(self, name: str) -> bool:
        """Unregister the tool; False when there was none of that name."""
        return self._tools.pop(name, None) is not None

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def tool_trust(self, tool: str) -> Trust:
        """Trusted by default unless registered with trusted=False (then it asks each time)."""
        found = self._tools.get(tool)
        return Trust.DEFAULT if found is not None and found.trusted else Trust.ASK

    async def list_tools(self) -> list[ToolInfo]:
        return [t.info() for t in self._tools.values()]

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        from pydantic import ValidationError  # loaded with the tool's metadata, not at start

        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult.error(f"no notebook tool named {name!r} (tools: {known})")
        try:
            kwargs = tool.meta.validate_arguments(args)
        except ValidationError as exc:
            return ToolResult.error(f"bad arguments for {name}: {validation_text(exc)}")
        try:
            if tool.is_async:
                value = await tool.fn(**kwargs)
            else:
                value = await self.run_sync(functools.partial(tool.fn, **kwargs))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the user's code failed: the model reads why, the turn goes on
            return ToolResult.error(exc_summary(exc))
        return ToolResult(result_text(value))

    async def aclose(self) -> None:
        return None  # the tools outlive agent envs


def validation_text(exc: ValidationError) -> str:
    """Pydantic's errors as one line per field: where, what was wrong (input values left out)."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False)[:MAX_ERRORS]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    more = exc.error_count() - MAX_ERRORS
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def result_text(value: Any) -> str:
    """What the model reads of a return value: strings as they are, JSON data as JSON, else repr."""
    if isinstance(value, str):
        return value
    if value is None:
        return "done (no return value)"
    if isinstance(value, (dict, list, tuple, int, float, bool)):
        try:
            return json.dumps(value, ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            pass
    try:
        return repr(value)
    except Exception as exc:
        return f"<{type(value).__name__}: repr failed: {exc_summary(exc)}>"
