"""Tool value types and the Server protocol every tool server implements."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ollie_nb.llm._types import ImagePart


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the dispatcher lists it: which server has it, and its JSON schema."""

    server: str
    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    sequential: bool = False  # it must run alone, never beside another call of the same response
    read_only: bool = False  # it changes nothing: identical calls of one response run once


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: its text, whether it is an error the model should see, and images.

    `text` always says what each image is; `images` carries the pictures themselves to the
    backends that take them (see `ImagePart`).
    """

    text: str
    is_error: bool = False
    images: tuple[ImagePart, ...] = ()
    # What the user sees under the call's line once it is answered (a data frame the code
    # made): shown in the cell, never sent to the model, never saved.
    shown: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    timed_out: bool = False  # an error because the call got no answer in time

    @classmethod
    def timeout(cls, message: str) -> ToolResult:
        """An error result for a call that got no answer in time (callers branch on it)."""
        return replace(cls.error(message), timed_out=True)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        """An error result whose text starts with `error:` so the model reads it as one."""
        text = message if message.startswith("error:") else f"error: {message}"
        return cls(text, is_error=True)


@runtime_checkable
class Server(Protocol):
    """A tool server, built-in or MCP; the dispatcher treats them all alike."""

    async def list_tools(self) -> list[ToolInfo]: ...

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult: ...

    async def aclose(self) -> None: ...


class Trust(enum.Enum):
    """What a built-in server advises about one of its tools (the trust gate decides)."""

    DEFAULT = "default"  # runs without asking unless the agent file's trustedTools leaves it out
    LISTED = "listed"  # runs without asking only when trustedTools names it
    ASK = "ask"  # always asks, whatever trustedTools says


@runtime_checkable
class TrustAdvice(Protocol):
    """A built-in server that advises the trust gate about its tools."""

    def tool_trust(self, tool: str) -> Trust: ...
