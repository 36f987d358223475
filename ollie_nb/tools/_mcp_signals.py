"""Resource update signals over the 2025 protocol: resources/subscribe and its notifications.

Over the 2026 protocol the SDK's `Client.listen` gives a stream of signals. Over the 2025
one, a client sends `resources/subscribe` and the server's `notifications/resources/updated`
arrive at the session's message handler: `ResourceSignals` is that handler, and hands each
signal to the streams open for its URI.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

_SESSION_ENDED = object()


class ResourceSignals:
    """The open signal streams of one session, by resource URI."""

    def __init__(self) -> None:
        self._queues: dict[str, set[asyncio.Queue[object]]] = {}

    async def on_message(self, message: Any) -> None:
        """The session's message handler: a resource's update signal goes to its streams."""
        from mcp.types import ResourceUpdatedNotification

        if isinstance(message, ResourceUpdatedNotification):
            for queue in self._queues.get(str(message.params.uri), ()):
                if queue.empty():  # signals carry no data: one waiting is as good as many
                    queue.put_nowait(message.params)

    def end(self) -> None:
        """The session ended: every open stream ends with an error."""
        for queues in self._queues.values():
            for queue in queues:
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(_SESSION_ENDED)

    def open(self, uri: str) -> asyncio.Queue[object]:
        queue: asyncio.Queue[object] = asyncio.Queue()
        self._queues.setdefault(uri, set()).add(queue)
        return queue

    def close(self, uri: str, queue: asyncio.Queue[object]) -> None:
        self._queues.get(uri, set()).discard(queue)

    def open_count(self, uri: str) -> int:
        """How many streams are open for `uri`."""
        return len(self._queues.get(uri, ()))


@asynccontextmanager
async def subscribed(
    client: Any, uri: str, signals: ResourceSignals, timeout: float, alive: Callable[[], bool]
) -> AsyncIterator[AsyncIterator[Any] | None]:
    """`resources/subscribe` for `uri` while open, if the server's capabilities offer it;
    None if they do not. Unsubscribes at the end while `alive()` says the session is and no
    other stream of `uri` is open (the server keeps one subscription per session and URI)."""
    resources = client.server_capabilities.resources
    if resources is None or not resources.subscribe:
        yield None
        return
    queue = signals.open(uri)
    try:
        with _no_deprecation_warning():
            await asyncio.wait_for(client.subscribe_resource(uri), timeout)
        yield _stream(queue)
    finally:
        signals.close(uri, queue)
        if alive() and not signals.open_count(uri):
            with contextlib.suppress(Exception), _no_deprecation_warning():
                await asyncio.wait_for(client.unsubscribe_resource(uri), timeout)


async def _stream(queue: asyncio.Queue[object]) -> AsyncIterator[object]:
    """The signals put in `queue`; a RuntimeError once the session is gone."""
    while True:
        signal = await queue.get()
        if signal is _SESSION_ENDED:
            raise RuntimeError("the MCP session ended; its resource subscription with it")
        yield signal


@contextlib.contextmanager
def _no_deprecation_warning() -> Iterator[None]:
    """resources/subscribe is deprecated by the SDK (gone in 2026), not by 2025 servers."""
    from mcp import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield
