"""SubagentServer: the built-in `subagent_*` tools, over a control the agent core hands in.

The server only checks arguments and words the answers; spawning, queueing and
waiting are the core's (`SubagentControl`), so this layer never imports it.
Every bad call becomes an error result for the model, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ollie_nb.errors import OllieUsageError
from ollie_nb.tools._types import ToolInfo, ToolResult

SERVER_NAME = "subagent"
DEFAULT_WAIT = 300.0
MAX_WAIT = 3600.0


class SubagentControl(Protocol):
    """What the tools drive; each call raises ValueError with a readable message on bad input."""

    def spawn(self, name: str, prompt: str) -> str: ...
    def send(self, name: str, prompt: str) -> str: ...
    def list(self) -> str: ...
    async def wait(self, names: Sequence[str], timeout: float) -> str: ...


_NAME = {"type": "string", "description": "The sub-agent's name, unique among yours."}
_PROMPT = {"type": "string", "description": "What the sub-agent should do, self-contained."}
_NAME_AND_PROMPT = {
    "type": "object",
    "properties": {"name": _NAME, "prompt": _PROMPT},
    "required": ["name", "prompt"],
}
TOOLS = (
    ToolInfo(
        SERVER_NAME,
        "subagent_spawn",
        "Start a sub-agent on a prompt; it works in parallel and this returns at once. "
        "You are told when it finishes.",
        _NAME_AND_PROMPT,
    ),
    ToolInfo(
        SERVER_NAME,
        "subagent_send",
        "Queue another prompt to one of your sub-agents.",
        _NAME_AND_PROMPT,
    ),
    ToolInfo(
        SERVER_NAME,
        "subagent_list",
        "List your sub-agents with their state and last reply.",
        {"type": "object", "properties": {}},
        read_only=True,  # reads the children's state
    ),
    ToolInfo(
        SERVER_NAME,
        "subagent_wait",
        "Wait until the named sub-agents (all, when none are named) are idle; returns "
        "their replies.",
        {
            "type": "object",
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}},
                "timeout": {"type": "number", "description": "Seconds (default 300)."},
            },
        },
    ),
)


class SubagentServer:
    """The `subagent` built-in server (a planning built-in: always trusted)."""

    def __init__(self, control: SubagentControl) -> None:
        self._control = control

    async def list_tools(self) -> list[ToolInfo]:
        return list(TOOLS)

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        try:
            if name == "subagent_spawn":
                return ToolResult(self._control.spawn(_text(args, "name"), _text(args, "prompt")))
            if name == "subagent_send":
                return ToolResult(self._control.send(_text(args, "name"), _text(args, "prompt")))
            if name == "subagent_list":
                return ToolResult(self._control.list())
            if name == "subagent_wait":
                return ToolResult(await self._control.wait(_names(args), _timeout(args)))
        except (
            ValueError,
            OllieUsageError,
        ) as exc:  # its own argument checks, the core's SubagentError
            return ToolResult.error(str(exc))
        return ToolResult.error(f"unknown tool {name!r} on the subagent server")

    async def aclose(self) -> None:
        return None


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string, got {type(value).__name__}")
    return value


def _names(args: dict[str, Any]) -> list[str]:
    names = args.get("names") or []
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("'names' must be a list of sub-agent names")
    return names


def _timeout(args: dict[str, Any]) -> float:
    value = args.get("timeout", DEFAULT_WAIT)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("'timeout' must be a number of seconds (0 or more)")
    return min(float(value), MAX_WAIT)
