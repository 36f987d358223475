"""OpenAIBackend: chat.completions streaming on the `openai` SDK, for any compatible server."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import urlsplit

from ollie_nb.llm._errors import (
    ContextOverflowError,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMStreamError,
    ToolUseFailedError,
    connection_detail,
    error_detail,
    failed_generation,
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
    ToolCall,
    ToolCallsReady,
    ToolDef,
    Usage,
    UsageReport,
)

OPENAI_URL = "https://api.openai.com/v1"

# Fields OpenAI-compatible servers use for the context window in their /models entries:
# OpenRouter and LM Studio `context_length`, vLLM `max_model_len`, llama.cpp `meta.n_ctx_train`.
_CONTEXT_FIELDS = ("context_length", "max_model_len", "context_window", "max_context_length")

_STOP_REASONS = {"function_call": "tool_calls"}  # others ("stop", "length", ...) pass through

# Where OpenAI-compatible servers stream reasoning: `reasoning_content` (DeepSeek, vLLM,
# llama.cpp, Ollama's /v1), `reasoning` (OpenRouter, Groq).
_REASONING_FIELDS = ("reasoning_content", "reasoning")
CACHE_BREAKPOINT = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # Anthropic's limit, through OpenRouter too


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


def mark_cache_breakpoints(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
    """Cache breakpoints in the OpenAI form OpenRouter passes to Anthropic models.

    The last tool, the system prompt and the conversation's last two user or tool
    messages (the tail, and the previous request's tail, so both prefixes are served)
    get `cache_control` on a content part; at most MAX_BREAKPOINTS in all.
    """
    budget = MAX_BREAKPOINTS
    if tools:
        tools[-1]["cache_control"] = dict(CACHE_BREAKPOINT)
        budget -= 1
    system = [m for m in messages if m["role"] == "system"][-1:]
    tail = [m for m in messages if m["role"] in ("user", "tool")][-2:]
    for m in [*system, *tail][: max(budget, 0)]:
        text = m.get("content")
        if isinstance(text, str) and text:
            m["content"] = [{"type": "text", "text": text, "cache_control": dict(CACHE_BREAKPOINT)}]


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
        if index is None:  # some servers leave out `index`
            index = self._index_by_id(call_id)
        slot = self._slots.setdefault(index, {"id": "", "name": "", "arguments": []})
        if call_id and not slot["id"]:
            slot["id"] = call_id
        function = getattr(delta, "function", None)
        if function is not None:
            if function.name and not slot["name"]:
                slot["name"] = function.name
            if function.arguments:
                slot["arguments"].append(function.arguments)

    def _index_by_id(self, call_id: str) -> int:
        """The slot of a delta without `index`: its id's call, a new call for a new id,
        else (a piece of arguments alone) the call being streamed."""
        if not call_id:
            return max(self._slots, default=0)
        found = (i for i, s in self._slots.items() if s["id"] == call_id)
        return next(found, max(self._slots, default=-1) + 1)

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
        if params.prompt_cache and self._caches_by_breakpoints():
            mark_cache_breakpoints(body["messages"], body.get("tools") or [])
        if params.max_tokens is not None:
            body[self._max_tokens_field] = params.max_tokens
        if params.max_completion_tokens is not None:
            body["max_completion_tokens"] = params.max_completion_tokens
        for key in (
            "temperature",
            "frequency_penalty",
            "presence_penalty",
            "top_p",
            "reasoning_effort",
        ):
            value = getattr(params, key)
            if value is not None:
                body[key] = value
        if params.stop:
            body["stop"] = list(params.stop)
        # Not in OpenAI's API, known to OpenRouter, vLLM and llama.cpp: sent as extra fields.
        extra = {
            k: getattr(params, k) for k in ("top_k", "min_p") if getattr(params, k) is not None
        }
        if extra:
            body["extra_body"] = extra
        return body

    def _caches_by_breakpoints(self) -> bool:
        """OpenRouter caches Anthropic models only where the request marks breakpoints."""
        return self.name == "openrouter" and self._model.lower().startswith("anthropic/")

    def _error(self, err: Exception, during: str) -> LLMError:
        """An SDK exception as an LLMError with one redacted line."""
        sdk, secrets = self._sdk, self._secrets()
        body = getattr(err, "body", None)
        generation = failed_generation(body) if isinstance(err, sdk.APIError) else None
        if generation is not None:
            detail = error_detail(body) or str(err)
            return ToolUseFailedError(
                f"{self.name}: {detail}", failed_generation=generation, secrets=secrets
            )
        if isinstance(err, sdk.APIStatusError):
            detail = error_detail(err.body) or err.message
            kind = LLMHTTPError
            if err.status_code in (400, 413) and is_context_overflow(err.body):
                kind = ContextOverflowError
            return kind(
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
    ) -> AsyncGenerator[StreamEvent, None]:
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
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or ():
                    if (choice.index or 0) != 0:
                        continue
                    delta = choice.delta
                    if delta is not None:
                        reasoning = _reasoning(delta)
                        if reasoning:
                            yield ReasoningDelta(reasoning)
                        if delta.content:
                            yield TextDelta(delta.content)
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
            yield ToolCallsReady(tuple(calls))
        if usage is not None:
            yield UsageReport(usage)
        stop = _STOP_REASONS.get(finish, finish) or "stop"
        if calls and stop == "stop":
            stop = "tool_calls"
        yield Done(stop)

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


def _reasoning(delta: Any) -> str:
    """The reasoning piece of a delta, under whichever name the server gives it."""
    for name in _REASONING_FIELDS:
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def _usage(raw: Any) -> Usage:
    """A chat.completions usage record; cached prompt tokens from `prompt_tokens_details`
    (OpenAI, OpenRouter) or DeepSeek's `prompt_cache_hit_tokens`."""
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(
        raw, "prompt_cache_hit_tokens", None
    )
    written = getattr(details, "cache_write_tokens", None)
    cost = getattr(raw, "cost", None)
    return Usage(
        input_tokens=raw.prompt_tokens or 0,
        output_tokens=raw.completion_tokens or 0,
        cache_read_tokens=cached if isinstance(cached, int) else 0,
        cache_write_tokens=written if isinstance(written, int) else 0,
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
    )


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
