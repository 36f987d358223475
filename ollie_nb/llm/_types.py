"""Canonical chat types shared by every backend: messages, tool calls, tools, stream events."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")

ThinkingKind = Literal["thinking", "redacted_thinking"]

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
    import uuid  # with `platform` behind it: loaded at the first such call, not at start

    return f"call_{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image a tool returned: its MIME type and base64 data, for backends that take images.

    The tool message's text already describes it (type, size, dimensions), so a backend
    without images, or a saved session, loses nothing the model cannot read.
    """

    mime_type: str
    data: str  # base64, as MCP carries it and the provider APIs want it


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """One thinking block of an Anthropic reply, kept byte for byte to be sent back.

    With thinking on, the API wants the blocks of the reply that made tool calls back,
    unchanged, ahead of its tool_use blocks: `thinking` with its `signature`, or
    `redacted_thinking` with its encrypted `data`.
    """

    kind: ThinkingKind = "thinking"
    thinking: str = ""
    signature: str = ""
    data: str = ""

    def to_wire(self) -> dict[str, Any]:
        """The block as the Messages API takes it back."""
        if self.kind == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form, for saved sessions (the wire form)."""
        return self.to_wire()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ThinkingBlock:
        """Inverse of to_dict."""
        if data.get("type") == "redacted_thinking":
            return cls("redacted_thinking", data=str(data.get("data", "")))
        return cls(
            "thinking",
            thinking=str(data.get("thinking", "")),
            signature=str(data.get("signature", "")),
        )


@dataclass(frozen=True, slots=True)
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
    thinking: tuple[ThinkingBlock, ...] = ()
    """Signed thinking blocks of an assistant reply: never part of `content`; only the
    Anthropic request builder sends them back (unchanged, as its API requires)."""
    images: tuple[ImagePart, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown message role {self.role!r}; expected one of {ROLES}")
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        if not isinstance(self.thinking, tuple):
            object.__setattr__(self, "thinking", tuple(self.thinking))
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
    def assistant(
        cls,
        content: str = "",
        tool_calls: Sequence[ToolCall] = (),
        thinking: Sequence[ThinkingBlock] = (),
    ) -> Message:
        """A model reply: text, tool calls, or both (and the thinking that came with them)."""
        return cls("assistant", content, tuple(tool_calls), thinking=tuple(thinking))

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
        if self.thinking:
            data["thinking"] = [block.to_dict() for block in self.thinking]
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
            thinking=tuple(ThinkingBlock.from_dict(b) for b in data.get("thinking") or ()),
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
    """Token counts of one response.

    `input_tokens` counts every input token, cached or not (they all fill the context);
    `cache_read_tokens` of them were served from the provider's prompt cache and
    `cache_write_tokens` were written to it. `cost` is money, when the provider says
    (OpenRouter does).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None = None

    @property
    def total_tokens(self) -> int:
        """Input plus output."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class GenerationParams:
    """Sampling settings; None (or empty `stop`) means the provider's default.

    `reasoning_effort` ("low", "medium", "high"; "none" turns reasoning off where a server
    knows the word) goes to OpenAI-compatible servers and turns Ollama's `think` on;
    `thinking_budget` turns Anthropic's extended thinking on with that many tokens.
    `max_completion_tokens` caps the reply including its reasoning (OpenAI's own name).
    `prompt_cache` marks cache breakpoints where a provider takes them (Anthropic, and
    Anthropic models through OpenRouter).
    """

    max_tokens: int | None = None
    temperature: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    top_k: int | None = None
    min_p: float | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    max_completion_tokens: int | None = None
    prompt_cache: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        elif not isinstance(self.stop, tuple):
            object.__setattr__(self, "stop", tuple(self.stop))


@dataclass(frozen=True)
class TextDelta:
    """The next piece of the reply's text."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """The next piece of the model's reasoning (thinking), shown apart from the reply."""

    text: str


@dataclass(frozen=True)
class ToolCallsReady:
    """Every complete tool call of the response, once, near its end."""

    tool_calls: tuple[ToolCall, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


@dataclass(frozen=True)
class ThinkingReady:
    """The response's signed thinking blocks, once, near its end: the reply keeps them."""

    blocks: tuple[ThinkingBlock, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.blocks, tuple):
            object.__setattr__(self, "blocks", tuple(self.blocks))


@dataclass(frozen=True)
class UsageReport:
    """The response's token counts."""

    usage: Usage


@dataclass(frozen=True)
class RetryNotice:
    """The request failed before anything streamed; it is sent again as attempt `attempt`
    after `delay` seconds; `reason` says why."""

    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class Done:
    """The response is complete; `stop_reason` is "stop", "tool_calls", "length", or the
    provider's own word for anything else."""

    stop_reason: str = "stop"


StreamEvent = (
    TextDelta | ReasoningDelta | ToolCallsReady | ThinkingReady | UsageReport | RetryNotice | Done
)
"""One event of a streamed response (see Backend.chat_stream for their order)."""
