"""OllamaBackend: Ollama's native /api/chat (NDJSON streaming) over httpx."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from ollie_nb.llm._errors import (
    ContextOverflowError,
    LLMConnectionError,
    LLMHTTPError,
    LLMStreamError,
    connection_detail,
    error_detail,
    http_error_message,
    is_context_overflow,
)
from ollie_nb.llm._openai import openai_tools
from ollie_nb.llm._remote import RemoteBackend
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

OLLAMA_URL = "http://localhost:11434"

# GenerationParams field -> Ollama `options` key.
_OPTIONS = {
    "max_tokens": "num_predict",
    "temperature": "temperature",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
}


def _arguments_object(arguments: str) -> Any:
    """Ollama wants tool-call arguments as an object, not JSON text."""
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return {}


def ollama_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Canonical messages in /api/chat form (tool results name their tool)."""
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    out: list[dict[str, Any]] = []
    for m in messages:
        entry: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            entry["tool_calls"] = [
                {"function": {"name": c.name, "arguments": _arguments_object(c.arguments)}}
                for c in m.tool_calls
            ]
        if m.role == "tool":
            tool_name = m.name or names.get(m.tool_call_id, "")
            if tool_name:
                entry["tool_name"] = tool_name
        out.append(entry)
    return out


class OllamaBackend(RemoteBackend):
    """A local (or remote) Ollama server through its native chat API."""

    name = "ollama"

    def __init__(
        self,
        model: str = "llama3.1",
        host: str = OLLAMA_URL,
        *,
        options: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
    ) -> None:
        super().__init__(model, retry=retry, timeout=timeout)
        self._host = host.rstrip("/")
        self._options = dict(options or {})
        self._context_lengths: dict[str, int | None] = {}

    @property
    def host(self) -> str:
        """The server requests go to."""
        return self._host

    def _repr_fields(self) -> list[str]:
        return [f"model={self._model!r}", f"host={self._host!r}"]

    def _secrets(self) -> tuple[str | None, ...]:
        """A password written into the host URL (`http://user:pass@host`) is a secret too."""
        from urllib.parse import urlsplit

        try:
            password = urlsplit(self._host).password
        except ValueError:
            password = None
        return (*super()._secrets(), password)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._repr_fields())})"

    def _new_client(self) -> Any:
        import httpx  # imported on first request: `import ollie_nb.llm` stays cheap

        return httpx.AsyncClient(
            base_url=self._host, timeout=httpx.Timeout(self._timeout, connect=10.0)
        )

    def _request(
        self, messages: list[Message], tools: list[ToolDef], params: GenerationParams
    ) -> dict[str, Any]:
        options = dict(self._options)
        for field, key in _OPTIONS.items():
            value = getattr(params, field)
            if value is not None:
                options[key] = value
        if params.max_tokens is None and params.max_completion_tokens is not None:
            options["num_predict"] = params.max_completion_tokens
        if params.stop:
            options["stop"] = list(params.stop)
        body: dict[str, Any] = {
            "model": self._model,
            "messages": ollama_messages(messages),
            "stream": True,
        }
        if tools:
            body["tools"] = openai_tools(tools)  # /api/chat takes the same shape
        if options:
            body["options"] = options
        if params.reasoning_effort:  # thinking models think only when asked to
            body["think"] = params.reasoning_effort.lower() not in ("none", "off", "false")
        return body

    async def _attempt(
        self, messages: list[Message], tools: list[ToolDef], params: GenerationParams
    ) -> AsyncGenerator[StreamEvent, None]:
        import httpx

        client = self._loop_client()
        body = self._request(messages, tools, params)
        calls: list[ToolCall] = []
        usage: Usage | None = None
        stop = ""
        opened = False
        try:
            async with client.stream("POST", "/api/chat", json=body) as response:
                opened = True
                if response.status_code >= 400:
                    raise await self._http_error(response)
                async for line in response.aiter_lines():
                    if not line.strip():
                        continue
                    chunk = json.loads(line)
                    if chunk.get("error"):
                        raise LLMStreamError(f"{self.name}: {error_detail(chunk)}")
                    message = chunk.get("message") or {}
                    if message.get("thinking"):
                        yield ReasoningDelta(message["thinking"])
                    if message.get("content"):
                        yield TextDelta(message["content"])
                    for call in message.get("tool_calls") or ():
                        calls.append(_tool_call(call, len(calls)))
                    if chunk.get("done"):
                        stop = chunk.get("done_reason") or "stop"
                        usage = Usage(
                            chunk.get("prompt_eval_count") or 0, chunk.get("eval_count") or 0
                        )
        except httpx.TransportError as err:
            during = "connection lost while streaming from" if opened else "cannot reach"
            raise LLMConnectionError(
                f"{self.name}: {during} {self._host}: {connection_detail(err)}"
            ) from None
        except ValueError as err:  # a line that is not JSON
            raise LLMStreamError(f"{self.name}: unreadable stream line: {err}") from None
        if calls:
            yield ToolCallsReady(tuple(calls))
        if usage is not None:
            yield UsageReport(usage)
        yield Done("tool_calls" if calls and stop == "stop" else stop or "stop")

    async def _http_error(self, response: Any) -> LLMHTTPError:
        raw = await response.aread()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        detail = error_detail(body)
        overflow = response.status_code in (400, 413) and is_context_overflow(body)
        return (ContextOverflowError if overflow else LLMHTTPError)(
            http_error_message(self.name, response.status_code, detail),
            status=response.status_code,
            retry_after=parse_retry_after(response.headers),
        )

    async def _get_json(self, method: str, path: str, body: Any = None) -> Any:
        import httpx

        try:
            response = await self._loop_client().request(method, path, json=body)
        except httpx.TransportError as err:
            raise LLMConnectionError(
                f"{self.name}: cannot reach {self._host}: {connection_detail(err)}"
            ) from None
        if response.status_code >= 400:
            raise await self._http_error(response)
        return response.json()

    async def models(self) -> list[str]:
        """The models pulled on the server (/api/tags)."""
        data = await self._get_json("GET", "/api/tags")
        return sorted(m["name"] for m in data.get("models") or ())

    async def context_length(self) -> int | None:
        """The context the model runs with: `num_ctx` if set, else its trained window (/api/show)."""
        num_ctx = self._options.get("num_ctx")
        if isinstance(num_ctx, int):
            return num_ctx
        if self._model not in self._context_lengths:
            try:
                info = await self._get_json("POST", "/api/show", {"model": self._model})
            except (LLMHTTPError, LLMConnectionError):
                return None  # advisory only: the chat request reports a real failure
            self._context_lengths[self._model] = context_from_show(info)
        return self._context_lengths[self._model]


def context_from_show(info: Mapping[str, Any]) -> int | None:
    """The context length out of an /api/show answer: `num_ctx` parameter, else model_info."""
    for line in str(info.get("parameters") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
            return int(parts[1])
    for key, value in (info.get("model_info") or {}).items():
        if key.endswith(".context_length") and isinstance(value, int):
            return value
    return None


def _tool_call(call: Mapping[str, Any], position: int) -> ToolCall:
    """One /api/chat tool call (arguments arrive as an object) in canonical form."""
    function = call.get("function") or {}
    arguments = function.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(
        id=call.get("id") or f"call_{position}", name=function.get("name", ""), arguments=arguments
    )
