"""AnthropicBackend: Messages API streaming on the official `anthropic` SDK."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from ollie_nb.llm._errors import (
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMStreamError,
    connection_detail,
    error_detail,
    http_error_message,
)
from ollie_nb.llm._remote import RemoteBackend, import_sdk, transport_errors
from ollie_nb.llm._retry import RetryPolicy, parse_retry_after
from ollie_nb.llm._types import (
    GenerationParams,
    Message,
    StreamEvent,
    ToolCall,
    ToolDef,
    Usage,
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
            blocks = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
                for c in m.tool_calls
            ]
            add("assistant", blocks)
    return "\n\n".join(system), out


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
        system, converted = anthropic_messages(messages)
        body: dict[str, Any] = {
            "model": self._model,
            "messages": converted,
            "max_tokens": params.max_tokens or self._max_tokens,
            "stream": True,
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = anthropic_tools(tools)
        if params.stop:
            body["stop_sequences"] = list(params.stop)
        # The API takes temperature and top_p; it has no frequency/presence penalties.
        extra = {
            key: getattr(params, key)
            for key in ("temperature", "top_p")
            if getattr(params, key) is not None
        }
        if extra:
            body["extra_body"] = extra
        return body

    def _error(self, err: Exception, during: str) -> LLMError:
        """An SDK exception as an LLMError with one redacted line."""
        sdk, secrets = self._sdk, self._secrets()
        if isinstance(err, sdk.APIStatusError):
            detail = error_detail(err.body) or err.message
            status = err.status_code
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
    ) -> AsyncIterator[StreamEvent]:
        client = self._loop_client()
        try:
            stream = await client.messages.create(**self._request(messages, tools, params))
        except self._sdk.AnthropicError as err:
            raise self._error(err, "cannot reach") from None
        calls: dict[int, dict[str, Any]] = {}
        input_tokens = output_tokens = 0
        stop = ""
        try:
            async for event in stream:
                kind = event.type
                if kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        if delta.text:
                            yield StreamEvent.of_text(delta.text)
                    elif delta.type == "input_json_delta" and event.index in calls:
                        calls[event.index]["json"].append(delta.partial_json)
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        calls[event.index] = {
                            "id": block.id,
                            "name": block.name,
                            "input": block.input,
                            "json": [],
                        }
                elif kind == "message_start":
                    usage = event.message.usage
                    input_tokens = _input_tokens(usage)
                    output_tokens = usage.output_tokens or 0
                elif kind == "message_delta":
                    stop = event.delta.stop_reason or stop
                    if event.usage is not None:
                        output_tokens = event.usage.output_tokens or output_tokens
                        input_tokens = _input_tokens(event.usage) or input_tokens
        except (self._sdk.AnthropicError, *transport_errors()) as err:
            raise self._error(err, "connection lost while streaming from") from None
        finally:
            await stream.close()
        tool_calls = [
            ToolCall(
                id=slot["id"],
                name=slot["name"],
                arguments="".join(slot["json"])
                or (json.dumps(slot["input"]) if slot["input"] else "{}"),
            )
            for _, slot in sorted(calls.items())
        ]
        if tool_calls:
            yield StreamEvent.of_tool_calls(tool_calls)
        yield StreamEvent.of_usage(Usage(input_tokens, output_tokens))
        yield StreamEvent.of_done(_STOP_REASONS.get(stop, stop) or "stop")

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
