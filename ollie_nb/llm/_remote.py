"""Common ground of the network backends: model switching, key hiding, per-loop clients, retries."""

from __future__ import annotations

import asyncio
import importlib
import sys
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from ollie_nb.llm._errors import MissingExtraError
from ollie_nb.llm._retry import RetryPolicy, stream_with_retries
from ollie_nb.llm._types import GenerationParams, Message, StreamEvent, ToolDef


class RemoteBackend(ABC):
    """Base of the backends that talk to a provider over HTTP.

    Subclasses implement `_new_client()` (an SDK or httpx client) and `_attempt()` (one
    request, raising LLMHTTPError / LLMConnectionError); this class adds retries and
    keeps one client per event loop, because an async HTTP client's connections belong
    to the loop that opened them (a script may call `asyncio.run` once per turn).
    """

    name: str = "remote"
    notice: str = ""
    """How this backend was chosen, one line (set by backend_from_env); empty otherwise."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
    ) -> None:
        self._model = model
        self._api_key = api_key or None
        self._retry = retry or RetryPolicy()
        self._timeout = timeout
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def model(self) -> str:
        """The model the next request goes to."""
        return self._model

    def set_model(self, name: str) -> None:
        """Switch the model for later requests."""
        self._model = name

    def _secrets(self) -> tuple[str | None, ...]:
        """Strings that must never appear in an error message."""
        return (self._api_key,)

    def secrets(self) -> tuple[str, ...]:
        """The values this backend holds that must never appear in any output (its API key)."""
        return tuple(dict.fromkeys(s for s in self._secrets() if s))

    @abstractmethod
    def _new_client(self) -> Any:
        """The provider's HTTP (or SDK) client, made for the running event loop."""

    def _loop_client(self) -> Any:
        """The HTTP client for the running event loop, made on first use in that loop.

        A client left behind by a finished loop is simply dropped: its connections died
        with that loop. (SDK clients get a plain `DefaultAsyncHttpxClient` for this reason:
        the SDK's own wrapper would try to close them on the new loop when collected.)
        """
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._new_client()
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client (a later request opens a new one)."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            close = getattr(client, "aclose", None) or client.close
            await close()

    def chat_stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDef] = (),
        params: GenerationParams | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream the model's reply to `messages`, offering it `tools` (see Backend)."""
        messages, tools = list(messages), list(tools)
        resolved = params or GenerationParams()
        return stream_with_retries(lambda: self._attempt(messages, tools, resolved), self._retry)

    @abstractmethod
    def _attempt(
        self, messages: list[Message], tools: list[ToolDef], params: GenerationParams
    ) -> AsyncGenerator[StreamEvent, None]:
        """One streamed request, no retries (chat_stream retries around it)."""

    def _repr_fields(self) -> list[str]:
        return [f"model={self._model!r}"]

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"{type(self).__name__}({', '.join([*self._repr_fields(), f'key={key}'])})"


def import_sdk(module: str, backend: str, extra: str) -> Any:
    """Import a provider SDK on first need, or raise MissingExtraError naming the pip extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(backend, module, extra) from None


def transport_errors() -> tuple[type[BaseException], ...]:
    """httpx-family transport errors an SDK may let through unwrapped while streaming."""
    found: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        module = sys.modules.get(name)  # only those already loaded by an SDK or by us
        error = getattr(module, "TransportError", None)
        if isinstance(error, type) and issubclass(error, BaseException):
            found.append(error)
    return tuple(found)
