"""OpenAIBackend: chat.completions streaming on the `openai` SDK, for any compatible server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

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

OPENAI_URL = "https://api.openai.com/v1"

# Fields OpenAI-compatible servers use for the context window in their /models entries:
# OpenRouter and LM Studio `context_length`, vLLM `max_model_len`, llama.cpp `meta.n_ctx_train`.
_CONTEXT_FIELDS = ("context_length", "max_model_len", "context_window", "max_context_length")

_STOP_REASONS = {"function_call": "tool_calls"}  # others ("stop", "length", ...) pass through


# Hosts whose chat.completions take images in user content. Elsewhere (vLLM, llama.cpp,
# LM Studio, Ollama /v1) a text-only model refuses the whole request, so images stay text.
IMAGE_HOSTS = frozenset({"api.openai.com", "openrouter.ai"})


def openai_messages(messages: list[Message], images: bool = True) -> list[dict[str, Any]]:
    """Canonical messages in the chat.completions form.

    A tool message carries text only; with `images`, the images of a run of tool messages
    follow it in one user message (the API takes images there, not in tool messages).
    """
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for m in messages:
        if m.role != "tool" and pending:
            out.append({"role": "user", "content": pending})
            pending = []
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            if images and m.images:
                pending.extend(_image_parts(m))
        elif m.role == "assistant" and m.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        }
                        for c in m.tool_calls
                    ],
                }
            )
        else:
            out.append({"role": m.role, "content": m.content})
    if pending:
        out.append({"role": "user", "content": pending})
    return out


def _image_parts(m: Message) -> list[dict[str, Any]]:
    """A tool message's images as user-content parts, after a line naming the call."""
    count = len(m.images)
    label = f"The {count} image{'s' if count > 1 else ''} returned by tool call {m.tool_call_id}"
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"{label} ({m.name or 'tool'}):"}]
    parts.extend(
        {"type": "image_url", "image_url": {"url": f"data:{i.mime_type};base64,{i.data}"}}
        for i in m.images
    )
    return parts


def openai_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    """Tool definitions in the chat.completions `tools` form."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


class _ToolCallAssembler:
    """Joins streamed tool-call deltas: id and name come first, arguments in many pieces."""

    def __init__(self) -> None:
        self._slots: dict[int, dict[str, Any]] = {}

    def add(self, delta: Any) -> None:
        index = getattr(delta, "index", None)
        call_id = getattr(delta, "id", None) or ""
        if index is None:  # some servers leave out `index`: match by id, else a new call
            index = next(
                (i for i, s in self._slots.items() if call_id and s["id"] == call_id),
                len(self._slots),
            )
        slot = self._slots.setdefault(index, {"id": "", "name": "", "arguments": []})
        if call_id and not slot["id"]:
            slot["id"] = call_id
        function = getattr(delta, "function", None)
        if function is not None:
            if function.name and not slot["name"]:
                slot["name"] = function.name
            if function.arguments:
                slot["arguments"].append(function.arguments)

    def calls(self) -> list[ToolCall]:
        return [
            ToolCall(
                id=slot["id"] or f"call_{index}",
                name=slot["name"],
                arguments="".join(slot["arguments"]) or "{}",
            )
            for index, slot in sorted(self._slots.items())
        ]


class OpenAIBackend(RemoteBackend):
    """Chat completions via `openai`: OpenAI, OpenRouter, vLLM, llama.cpp, LM Studio, Ollama /v1."""

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        name: str = "openai",
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
    ) -> None:
        self._sdk = import_sdk("openai", name, "openai")
        if api_key is None and base_url is None:
            api_key = os.environ.get("OPENAI_API_KEY")
            if not api_key:
                raise LLMConfigError(
                    f"the {name} backend needs an API key: pass api_key= or set OPENAI_API_KEY"
                )
        super().__init__(model, api_key=api_key, retry=retry, timeout=timeout)
        self.name = name
        self._base_url = (base_url or OPENAI_URL).rstrip("/")
        # OpenAI's own API wants max_completion_tokens (reasoning models refuse max_tokens);
        # compatible servers mostly know only max_tokens.
        official = urlsplit(self._base_url).hostname == "api.openai.com"
        self._max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        self._sends_images = urlsplit(self._base_url).hostname in IMAGE_HOSTS
        self._context_lengths: dict[str, int | None] = {}

    @property
    def base_url(self) -> str:
        """The API root requests go to."""
        return self._base_url

    def _repr_fields(self) -> list[str]:
        return [f"model={self._model!r}", f"base_url={self._base_url!r}"]

    def _new_client(self) -> Any:
        return self._sdk.AsyncOpenAI(
            # Local servers take no key, but the SDK insists on one.
            api_key=self._api_key or "no-key",
            base_url=self._base_url,
            max_retries=0,
            timeout=self._timeout,
            http_client=self._sdk.DefaultAsyncHttpxClient(),
        )

    def _request(
        self, messages: list[Message], tools: list[ToolDef], params: GenerationParams
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": openai_messages(messages, images=self._sends_images),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = openai_tools(tools)
        if params.max_tokens is not None:
            body[self._max_tokens_field] = params.max_tokens
        for key in ("temperature", "frequency_penalty", "presence_penalty", "top_p"):
            value = getattr(params, key)
            if value is not None:
                body[key] = value
        if params.stop:
            body["stop"] = list(params.stop)
        return body

    def _error(self, err: Exception, during: str) -> LLMError:
        """An SDK exception as an LLMError with one redacted line."""
        sdk, secrets = self._sdk, self._secrets()
        if isinstance(err, sdk.APIStatusError):
            detail = error_detail(err.body) or err.message
            return LLMHTTPError(
                http_error_message(self.name, err.status_code, detail),
                status=err.status_code,
                retry_after=parse_retry_after(err.response.headers),
                secrets=secrets,
            )
        if isinstance(err, (sdk.APIConnectionError, *transport_errors())):
            return LLMConnectionError(
                f"{self.name}: {during} {self._base_url}: {connection_detail(err)}",
                secrets=secrets,
            )
        if isinstance(err, sdk.APIError):
            return LLMStreamError(f"{self.name}: {err.message}", secrets=secrets)
        return LLMError(f"{self.name}: {err}", secrets=secrets)

    async def _attempt(
        self, messages: list[Message], tools: list[ToolDef], params: GenerationParams
    ) -> AsyncIterator[StreamEvent]:
        client = self._loop_client()
        try:
            stream = await client.chat.completions.create(**self._request(messages, tools, params))
        except self._sdk.OpenAIError as err:
            raise self._error(err, "cannot reach") from None
        assembler = _ToolCallAssembler()
        finish = ""
        usage: Usage | None = None
        try:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = Usage(
                        input_tokens=chunk.usage.prompt_tokens or 0,
                        output_tokens=chunk.usage.completion_tokens or 0,
                    )
                for choice in chunk.choices or ():
                    if (choice.index or 0) != 0:
                        continue
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            yield StreamEvent.of_text(delta.content)
                        for call_delta in delta.tool_calls or ():
                            assembler.add(call_delta)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except (self._sdk.OpenAIError, *transport_errors()) as err:
            raise self._error(err, "connection lost while streaming from") from None
        finally:
            await stream.close()
        calls = assembler.calls()
        if calls:
            yield StreamEvent.of_tool_calls(calls)
        if usage is not None:
            yield StreamEvent.of_usage(usage)
        stop = _STOP_REASONS.get(finish, finish) or "stop"
        if calls and stop == "stop":
            stop = "tool_calls"
        yield StreamEvent.of_done(stop)

    async def models(self) -> list[str]:
        """The model ids the server lists at /models."""
        try:
            return sorted([m.id async for m in self._loop_client().models.list()])
        except self._sdk.OpenAIError as err:
            raise self._error(err, "cannot reach") from None

    async def context_length(self) -> int | None:
        """The context window the server reports for the model, if it reports one (best effort)."""
        if self._model not in self._context_lengths:
            self._context_lengths[self._model] = await self._probe_context_length()
        return self._context_lengths[self._model]

    async def _probe_context_length(self) -> int | None:
        try:
            entries = [m async for m in self._loop_client().models.list()]
        except self._sdk.OpenAIError:
            return None  # advisory only: the chat request reports a real failure
        for entry in entries:
            if entry.id == self._model:
                return context_from_model_entry(entry.to_dict())
        return None


def context_from_model_entry(entry: dict[str, Any]) -> int | None:
    """The context window out of one /models entry of an OpenAI-compatible server, if present."""
    places = [entry, entry.get("meta") or {}, entry.get("top_provider") or {}]
    for place in places:
        if not isinstance(place, dict):
            continue
        for key in (*_CONTEXT_FIELDS, "n_ctx", "n_ctx_train"):
            value = place.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
            if isinstance(value, str) and value.isdigit():
                return int(value)
    return None
