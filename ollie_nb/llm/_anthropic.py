"""AnthropicBackend: Messages API streaming on the official `anthropic` SDK."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from typing import Any

from ollie_nb.llm._errors import (
    ContextOverflowError,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMStreamError,
    connection_detail,
    error_detail,
    http_error_message,
    is_context_overflow,
)
from ollie_nb.llm._remote import RemoteBackend, import_sdk, transport_errors
from ollie_nb.llm._retry import RetryPolicy, parse_retry_after
from ollie_nb.llm._types import (
    Done,
    GenerationParams,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingReady,
    ToolCall,
    ToolCallsReady,
    ToolDef,
    Usage,
    UsageReport,
)

ANTHROPIC_URL = "https://api.anthropic.com"

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}

# Errors Anthropic reports inside a 200 stream, as the HTTP status they stand for, so an
# overload before the first token is retried like the 529 it would otherwise have been.
_STREAM_ERROR_STATUS = {"rate_limit_error": 429, "overloaded_error": 529, "api_error": 500}

CACHE_BREAKPOINT = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # the Messages API refuses a request with more cache_control blocks
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"  # thinking between tool calls


def _tool_input(arguments: str) -> dict[str, Any]:
    """A tool call's JSON arguments as the object Anthropic wants ({} if they are not one)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Canonical messages as Anthropic's (system, messages).

    System messages join into `system`; tool results become `tool_result` blocks of a
    user message; consecutive messages of one role merge, as the API wants them alternating.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for m in messages:
        if m.role == "system":
            if m.content:
                system.append(m.content)
        elif m.role == "tool":
            add("user", [_tool_result(m)])
        elif m.role == "user":
            add("user", [{"type": "text", "text": m.content}] if m.content else [])
        else:
            # Thinking first, unchanged: the API checks the signatures of the reply's blocks.
            blocks = [block.to_wire() for block in m.thinking]
            blocks += [{"type": "text", "text": m.content}] if m.content else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
                for c in m.tool_calls
            ]
            add("assistant", blocks)
    return "\n\n".join(system), out


def mark_cache_breakpoints(
    system: list[dict[str, Any]], messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> None:
    """`cache_control` on the last tool, the system prompt and the conversation's tail.

    The tail is the last block of each of the last two user messages (tool results
    travel in user messages): the newest, for the next request to read, and the one
    before, which the previous request wrote, for this one to read. Never more than
    MAX_BREAKPOINTS; the prefix up to each is what the provider's cache can serve.
    """
    places: list[dict[str, Any]] = []
    if tools:
        places.append(tools[-1])
    if system:
        places.append(system[-1])
    users = [m for m in messages if m["role"] == "user" and m["content"]][-2:]
    places += [m["content"][-1] for m in reversed(users)]
    for block in places[:MAX_BREAKPOINTS]:
        block["cache_control"] = dict(CACHE_BREAKPOINT)


def _tool_result(m: Message) -> dict[str, Any]:
    """A tool message as a `tool_result` block: its text, then its images."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id}
    if m.images:
        block["content"] = [{"type": "text", "text": m.content or "(no text)"}] + [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": i.mime_type, "data": i.data},
            }
            for i in m.images
        ]
    elif m.content:
        block["content"] = m.content
    return block


def anthropic_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    """Tool definitions in the Messages API form."""
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]


class AnthropicBackend(RemoteBackend):
    """Claude models through the Messages API, streamed; the SDK's own retries are off."""

    name = "anthropic"

    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_tokens: int = 8192,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
    ) -> None:
        self._sdk = import_sdk("anthropic", "anthropic", "anthropic")
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise LLMConfigError(
                "the anthropic backend needs an API key: pass api_key= or set ANTHROPIC_API_KEY"
            )
        # 529 is Anthropic's "overloaded": as transient as a 429.
        super().__init__(
            model,
            api_key=api_key,
            retry=retry or RetryPolicy(statuses=(429, 529)),
            timeout=timeout,
        )
        self._base_url = (base_url or ANTHROPIC_URL).rstrip("/")
        self._max_tokens = max_tokens
        self._context_lengths: dict[str, int | None] = {}

    @property
    def base_url(self) -> str:
        """The API root requests go to."""
        return self._base_url

    def _repr_fields(self) -> list[str]:
        return [f"model={self._model!r}", f"base_url={self._base_url!r}"]

    def _new_client(self) -> Any:
        return self._sdk.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=0,
            timeout=self._timeout,
            http_client=self._sdk.DefaultAsyncHttpxClient(),
        )

    def _request(
        self, messages: list[Message], tools: list[ToolDef], params: GenerationParams
    ) -> dict[str, Any]:
        system_text, converted = anthropic_messages(messages)
        system = [{"type": "text", "text": system_text}] if system_text else []
        wire_tools = anthropic_tools(tools)
        if params.prompt_cache:
            mark_cache_breakpoints(system, converted, wire_tools)
        body: dict[str, Any] = {
            "model": self._model,
            "messages": converted,
            "max_tokens": params.max_tokens or params.max_completion_tokens or self._max_tokens,
            "stream": True,
        }
        if system:
            body["system"] = system
        if wire_tools:
            body["tools"] = wire_tools
        if params.stop:
            body["stop_sequences"] = list(params.stop)
        # The API takes temperature, top_p and top_k; it has no frequency/presence penalties.
        sampling: tuple[str, ...] = ("temperature", "top_p", "top_k")
        if params.thinking_budget:
            self._think(body, params.thinking_budget)
            sampling = ("top_p",)  # thinking refuses temperature and top_k
        extra = {key: getattr(params, key) for key in sampling if getattr(params, key) is not None}
        if extra:
            body["extra_body"] = extra
        return body

    def _think(self, body: dict[str, Any], budget: int) -> None:
        """Extended thinking with `budget` tokens, thinking between tool calls too; the API
        wants max_tokens above the budget, so the answer gets its usual room beyond it."""
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if body["max_tokens"] <= budget:
            body["max_tokens"] = budget + self._max_tokens
        body["extra_headers"] = {"anthropic-beta": INTERLEAVED_THINKING}

    def _error(self, err: Exception, during: str) -> LLMError:
        """An SDK exception as an LLMError with one redacted line."""
        sdk, secrets = self._sdk, self._secrets()
        if isinstance(err, sdk.APIStatusError):
            detail = error_detail(err.body) or err.message
            status = err.status_code
            if status in (400, 413) and is_context_overflow(err.body):
                return ContextOverflowError(
                    http_error_message(self.name, status, detail), status=status, secrets=secrets
                )
            if status < 400:  # an `event: error` inside a 200 stream
                kind = getattr(err, "type", None) or ""
                status = _STREAM_ERROR_STATUS.get(kind, 0)
                if not status:
                    return LLMStreamError(
                        f"{self.name}: {kind or 'error'}: {detail}", secrets=secrets
                    )
            return LLMHTTPError(
                http_error_message(self.name, status, detail),
                status=status,
                retry_after=parse_retry_after(err.response.headers),
                secrets=secrets,
            )
        if isinstance(err, (sdk.APIConnectionError, *transport_errors())):
            return LLMConnectionError(
                f"{self.name}: {during} {self._base_url}: {connection_detail(err)}",
                secrets=secrets,
            )
        return LLMError(f"{self.name}: {err}", secrets=secrets)

    async def _attempt(
        self, messages: list[Message], tools: list[ToolDef], params: GenerationParams
    ) -> AsyncGenerator[StreamEvent, None]:
        client = self._loop_client()
        try:
            stream = await client.messages.create(**self._request(messages, tools, params))
        except self._sdk.AnthropicError as err:
            raise self._error(err, "cannot reach") from None
        reader = _StreamReader()
        try:
            async for event in stream:
                for out in reader.read(event):
                    yield out
        except (self._sdk.AnthropicError, *transport_errors()) as err:
            raise self._error(err, "connection lost while streaming from") from None
        finally:
            await stream.close()
        for out in reader.finish():
            yield out

    async def models(self) -> list[str]:
        """The model ids the API lists."""
        try:
            return sorted([m.id async for m in self._loop_client().models.list()])
        except self._sdk.AnthropicError as err:
            raise self._error(err, "cannot reach") from None

    async def context_length(self) -> int | None:
        """The model's input window as the models API reports it (best effort)."""
        if self._model not in self._context_lengths:
            try:
                info = await self._loop_client().models.retrieve(self._model)
            except self._sdk.AnthropicError:
                return None  # advisory only: the chat request reports a real failure
            self._context_lengths[self._model] = getattr(info, "max_input_tokens", None)
        return self._context_lengths[self._model]


def _input_tokens(usage: Any) -> int:
    """All input tokens of a usage record, cached or not (they all fill the context)."""
    return sum(
        getattr(usage, key, None) or 0
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


class _StreamReader:
    """Reads Messages API stream events: text and thinking deltas out as they come; tool
    calls, signed thinking blocks and usage assembled for the end."""

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, Any]] = {}
        self.thinking: dict[int, dict[str, Any]] = {}
        self.usage: Any = None
        self.output_tokens = 0
        self.stop = ""

    def read(self, event: Any) -> list[StreamEvent]:
        kind = event.type
        if kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        if kind == "content_block_start":
            self._start(event.index, event.content_block)
        elif kind == "message_start":
            self.usage = event.message.usage
            self.output_tokens = self.usage.output_tokens or 0
        elif kind == "message_delta":
            self.stop = event.delta.stop_reason or self.stop
            if event.usage is not None:
                self.output_tokens = event.usage.output_tokens or self.output_tokens
                if _input_tokens(event.usage):
                    self.usage = event.usage
        return []

    def _start(self, index: int, block: Any) -> None:
        if block.type == "tool_use":
            self.calls[index] = {"id": block.id, "name": block.name, "input": block.input}
            self.calls[index]["json"] = []
        elif block.type == "thinking":
            self.thinking[index] = {"kind": "thinking", "text": [block.thinking or ""]}
            self.thinking[index]["signature"] = block.signature or ""
        elif block.type == "redacted_thinking":
            self.thinking[index] = {"kind": "redacted_thinking", "data": block.data}

    def _delta(self, index: int, delta: Any) -> list[StreamEvent]:
        if delta.type == "text_delta":
            return [TextDelta(delta.text)] if delta.text else []
        if delta.type == "input_json_delta" and index in self.calls:
            self.calls[index]["json"].append(delta.partial_json)
        elif delta.type == "thinking_delta" and index in self.thinking:
            self.thinking[index]["text"].append(delta.thinking)
            return [ReasoningDelta(delta.thinking)] if delta.thinking else []
        elif delta.type == "signature_delta" and index in self.thinking:
            self.thinking[index]["signature"] += delta.signature
        return []

    def finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        blocks = [_thinking_block(slot) for _, slot in sorted(self.thinking.items())]
        calls = [_tool_call(slot) for _, slot in sorted(self.calls.items())]
        if calls:
            out.append(ToolCallsReady(tuple(calls)))
        if blocks:
            out.append(ThinkingReady(tuple(blocks)))
        out.append(UsageReport(_usage(self.usage, self.output_tokens)))
        out.append(Done(_STOP_REASONS.get(self.stop, self.stop) or "stop"))
        return out


def _thinking_block(slot: dict[str, Any]) -> ThinkingBlock:
    if slot["kind"] == "redacted_thinking":
        return ThinkingBlock("redacted_thinking", data=slot["data"] or "")
    return ThinkingBlock("thinking", "".join(slot["text"]), slot["signature"])


def _tool_call(slot: dict[str, Any]) -> ToolCall:
    arguments = "".join(slot["json"]) or (json.dumps(slot["input"]) if slot["input"] else "{}")
    return ToolCall(id=slot["id"], name=slot["name"], arguments=arguments)


def _usage(raw: Any, output_tokens: int) -> Usage:
    """A usage record with its cache reads and writes (all counted as input too)."""
    if raw is None:
        return Usage(0, output_tokens)
    return Usage(
        input_tokens=_input_tokens(raw),
        output_tokens=output_tokens,
        cache_read_tokens=getattr(raw, "cache_read_input_tokens", None) or 0,
        cache_write_tokens=getattr(raw, "cache_creation_input_tokens", None) or 0,
    )
