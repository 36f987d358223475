"""Canonical chat types shared by every backend: messages, tool calls, tools, stream events."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")

StreamEventKind = Literal["text", "tool_calls", "usage", "retry", "done"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean_text_fields(obj: Any, keys: tuple[str, ...]) -> None:
    """Join surrogate pairs and replace lone surrogates by U+FFFD in string fields of `obj`.

    JSON escapes decode to surrogates (a model writing "\\ud800", an emoji split across
    stream chunks); no provider request and no UTF-8 file can carry them, so one in the
    history would break every later request.
    """
    for key in keys:
        value = getattr(obj, key)
        if isinstance(value, str) and _SURROGATE.search(value):
            text = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
            object.__setattr__(obj, key, text)


def new_call_id() -> str:
    """A fresh tool-call id, for calls written by hand (scripted models, notebooks)."""
    return f"call_{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the model; `arguments` is the raw JSON text as the provider sent it.

    Written by hand, `ToolCall(name="execute_code", arguments={"code": "ls"})` works too:
    a dict is encoded to JSON text, and the id defaults to a fresh one. An empty name is
    kept: models send such calls, and the agent answers them with an error result.
    """

    id: str = field(default_factory=new_call_id)
    name: str = ""
    arguments: str = "{}"

    def __post_init__(self) -> None:
        if isinstance(self.arguments, Mapping):
            text = json.dumps(dict(self.arguments), ensure_ascii=False)
            object.__setattr__(self, "arguments", text)
        elif not isinstance(self.arguments, str):
            raise TypeError(
                "ToolCall arguments must be JSON text or a dict, "
                f"got {type(self.arguments).__name__}"
            )
        _clean_text_fields(self, ("id", "name", "arguments"))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form, for saved sessions."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        """Inverse of to_dict; arguments given as a dict are encoded to JSON text."""
        arguments = data.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        return cls(id=str(data.get("id", "")), name=str(data["name"]), arguments=arguments)


@dataclass(frozen=True)
class ImagePart:
    """An image a tool returned: its MIME type and base64 data, for backends that take images.

    The tool message's text already describes it (type, size, dimensions), so a backend
    without images, or a saved session, loses nothing the model cannot read.
    """

    mime_type: str
    data: str  # base64, as MCP carries it and the provider APIs want it


@dataclass(frozen=True)
class Message:
    """One chat message in the canonical form every backend converts from.

    `images` (tool messages only) are sent by the backends that take images in tool
    results; they are not saved with the session (the text describes each one).
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    images: tuple[ImagePart, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown message role {self.role!r}; expected one of {ROLES}")
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        if not isinstance(self.images, tuple):
            object.__setattr__(self, "images", tuple(self.images))
        _clean_text_fields(self, ("content", "tool_call_id", "name"))

    @classmethod
    def system(cls, content: str) -> Message:
        """A system prompt."""
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        """A user prompt."""
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Sequence[ToolCall] = ()) -> Message:
        """A model reply: text, tool calls, or both."""
        return cls("assistant", content, tuple(tool_calls))

    @classmethod
    def tool(
        cls, tool_call_id: str, content: str, name: str = "", images: Sequence[ImagePart] = ()
    ) -> Message:
        """The result of the tool call `tool_call_id`; `name` is the tool's name."""
        return cls("tool", content, tool_call_id=tool_call_id, name=name, images=tuple(images))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (empty fields left out), for saved sessions."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        if self.tool_call_id:
            data["tool_call_id"] = self.tool_call_id
        if self.name:
            data["name"] = self.name
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Inverse of to_dict."""
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
            tool_call_id=data.get("tool_call_id") or "",
            name=data.get("name") or "",
        )


@dataclass(frozen=True)
class ToolDef:
    """A tool offered to the model: name, description and JSON schema of its arguments."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


@dataclass(frozen=True)
class Usage:
    """Token counts of one response."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class GenerationParams:
    """Sampling settings; None (or empty `stop`) means the provider's default."""

    max_tokens: int | None = None
    temperature: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        elif not isinstance(self.stop, tuple):
            object.__setattr__(self, "stop", tuple(self.stop))


@dataclass(frozen=True)
class StreamEvent:
    """One event of a streamed response; `kind` says which fields are meaningful.

    - "text": `text` is the next piece of the reply;
    - "tool_calls": `tool_calls` holds every complete call of the response (once, near the end);
    - "usage": `usage` holds the response's token counts;
    - "retry": the request failed before anything streamed and is retried as attempt
      `attempt` after `delay` seconds; `reason` says why;
    - "done": the response is complete; `stop_reason` is "stop", "tool_calls", "length",
      or the provider's own word for anything else.
    """

    kind: StreamEventKind
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    attempt: int = 0
    delay: float = 0.0
    reason: str = ""
    stop_reason: str = ""

    @classmethod
    def of_text(cls, text: str) -> StreamEvent:
        """A text delta."""
        return cls("text", text=text)

    @classmethod
    def of_tool_calls(cls, calls: Sequence[ToolCall]) -> StreamEvent:
        """The complete tool calls of the response."""
        return cls("tool_calls", tool_calls=tuple(calls))

    @classmethod
    def of_usage(cls, usage: Usage) -> StreamEvent:
        """The response's token counts."""
        return cls("usage", usage=usage)

    @classmethod
    def of_retry(cls, attempt: int, delay: float, reason: str) -> StreamEvent:
        """A retry announced before sleeping `delay` seconds."""
        return cls("retry", attempt=attempt, delay=delay, reason=reason)

    @classmethod
    def of_done(cls, stop_reason: str) -> StreamEvent:
        """The end of the response."""
        return cls("done", stop_reason=stop_reason)
