"""The Backend protocol: what the agent needs from a chat model provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from ollie_nb.llm._types import GenerationParams, Message, StreamEvent, ToolDef


@runtime_checkable
class Backend(Protocol):
    """A chat model provider that streams one response per call.

    `chat_stream` is an async generator: it yields TextDelta and ReasoningDelta pieces as
    they arrive, then the complete ToolCallsReady (if any), ThinkingReady (signed thinking
    blocks, if any), UsageReport (if known) and finally Done. RetryNotice events may come
    first, while a rate-limited request waits to be sent again.
    Cancelling the consuming task closes the HTTP stream.
    """

    name: str

    @property
    def model(self) -> str:
        """The model the next request goes to."""
        ...

    def set_model(self, name: str) -> None:
        """Switch the model for later requests."""
        ...

    def chat_stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDef] = (),
        params: GenerationParams | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream the model's reply to `messages`, offering it `tools`."""
        ...

    async def context_length(self) -> int | None:
        """The model's context window in tokens, or None when the provider does not say."""
        ...

    async def models(self) -> list[str]:
        """The model names the provider offers."""
        ...


@runtime_checkable
class HoldsSecrets(Protocol):
    """A backend that holds secrets (API keys) which must never appear in any output."""

    def secrets(self) -> tuple[str, ...]:
        """The secret values, non-empty, for redaction."""
        ...


def backend_secrets(backend: object) -> tuple[str, ...]:
    """The secrets a backend holds: its `secrets()`, or none for backends without keys."""
    return tuple(backend.secrets()) if isinstance(backend, HoldsSecrets) else ()
