"""The chat-backend error hierarchy, rooted in LLMError; its messages are redacted."""

from __future__ import annotations

from collections.abc import Iterable

from ollie_nb.errors import OllieUsageError, ServiceError
from ollie_nb.redaction import redact


class LLMError(ServiceError):
    """Base of every error a chat backend raises; the message is one readable line.

    A chat backend's failure is the provider's (a ServiceError) or, for the kinds that
    are also OllieUsageError, the settings'; never a bug.
    """

    source = "the chat provider"
    advice = "try again, or %ollie backend NAME to use another"

    def __init__(self, message: str, *, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(redact(message, secrets))

    @property
    def message(self) -> str:
        """The one-line message (already redacted)."""
        return str(self.args[0]) if self.args else ""


class LLMConfigError(LLMError, OllieUsageError):
    """The backend was asked for something it cannot be: unknown name, missing key or setting."""


class MissingExtraError(LLMError, OllieUsageError, ImportError):
    """The provider SDK for a backend is not installed; the message names the pip extra."""

    def __init__(self, backend: str, module: str, extra: str) -> None:
        super().__init__(
            f"the {backend} backend needs the '{module}' package: pip install 'ollie-nb[{extra}]'"
        )
        self.backend = backend
        self.module = module
        self.extra = extra


class LLMHTTPError(LLMError):
    """The provider answered with an HTTP error status (after any retries)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retry_after: float | None = None,
        secrets: Iterable[str | None] = (),
    ) -> None:
        super().__init__(message, secrets=secrets)
        self.status = status
        self.retry_after = retry_after
        if status in (401, 403):  # the provider refused the key: the settings can fix it
            self.advice = "check the backend's API key and URL (%ollie backend shows them)"


class LLMConnectionError(LLMError):
    """The provider could not be reached, or the connection broke while streaming."""


class LLMStreamError(LLMError):
    """The provider reported an error inside an otherwise successful stream."""


class ContextOverflowError(LLMHTTPError):
    """The request is longer than the model's context window: compacting the history helps."""


class ToolUseFailedError(LLMError):
    """The provider refused the model's tool call as malformed (Groq's `tool_use_failed`).

    `failed_generation` is what the model wrote; telling it what failed lets it try again.
    """

    def __init__(
        self, message: str, *, failed_generation: str = "", secrets: Iterable[str | None] = ()
    ) -> None:
        super().__init__(message, secrets=secrets)
        self.failed_generation = redact(failed_generation, secrets)


# How providers say a request did not fit the context window. Codes first (OpenAI, Groq,
# llama.cpp); Anthropic, OpenRouter, vLLM and DeepSeek give only a message, so its words.
_OVERFLOW_CODES = {
    "context_length_exceeded",
    "exceed_context_size_error",
    "string_above_max_length",
}
_OVERFLOW_WORDS = (
    "maximum context length",
    "prompt is too long",
    "context length exceeded",
    "exceeds the available context size",
    "context window",
)


def error_object(body: object) -> dict[str, object]:
    """The provider's error object out of a decoded error body ({} when there is none)."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            return inner
        return body
    return {}


def is_context_overflow(body: object) -> bool:
    """Whether a decoded error body says the request overflowed the context window."""
    error = error_object(body)
    for key in ("code", "type"):
        if str(error.get(key) or "") in _OVERFLOW_CODES:
            return True
    message = str(error.get("message") or "").lower()
    return any(words in message for words in _OVERFLOW_WORDS)


def failed_generation(body: object) -> str | None:
    """The model's rejected tool-call text when the body is a `tool_use_failed` error."""
    error = error_object(body)
    if error.get("code") != "tool_use_failed":
        return None
    return str(error.get("failed_generation") or "")


def error_detail(body: object) -> str:
    """The provider's own error message out of a decoded error body, on one short line."""
    detail: object = body
    for _ in range(3):  # {"error": {"message": ...}}, {"error": "..."}, {"message": ...}
        if isinstance(detail, dict):
            inner = detail.get("error", detail.get("message", detail.get("detail")))
            if inner is None:
                break
            detail = inner
        else:
            break
    if detail is None:
        return ""
    if isinstance(detail, (bytes, bytearray)):
        detail = detail.decode("utf-8", "replace")
    text = " ".join(str(detail).split())
    return text if len(text) <= 300 else text[:297] + "..."


def http_error_message(provider: str, status: int, detail: str) -> str:
    """The one line an LLMHTTPError carries: provider, status and the provider's message."""
    return f"{provider}: HTTP {status}: {detail}" if detail else f"{provider}: HTTP {status}"


def connection_detail(err: BaseException) -> str:
    """What broke a connection, in a few words: the underlying error's text or its type."""
    cause = err.__cause__ or err.__context__ or err
    text = " ".join(str(cause).split())
    if not text or text.endswith("Connection error."):
        text = type(cause).__name__
    if cause is not err and "timed out" in str(err).lower():
        text = f"timed out ({text})"
    return text
