"""Retrying rate-limited requests, shared by the HTTP backends (their SDKs' own retries are off)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from contextvars import ContextVar
from dataclasses import dataclass

from ollie_nb.llm._errors import LLMHTTPError
from ollie_nb.llm._types import RetryNotice, StreamEvent

FirstError = Callable[[LLMHTTPError], Awaitable[bool]]
first_error_hook: ContextVar[FirstError | None] = ContextVar("first_error_hook", default=None)
"""Asked once, before the first retry of a request: True (it handled the error, e.g. by
switching the model) raises the error at once instead of retrying, as ollie's turnError
hook does. The agent's turn sets it; the stream runs in the turn's context."""


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before sending a refused request again.

    A response with a status in `statuses` is retried up to `max_retries` times, but only
    while nothing of it has been streamed. The wait is the server's Retry-After (capped at
    `max_delay`), else `base_delay * 2**n` (1, 2, 4 s by default).
    """

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0
    statuses: tuple[int, ...] = (429,)

    def delay(self, retry_index: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry_index` (0-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        return min(self.base_delay * (2.0**retry_index), self.max_delay)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, or `Retry-After` as seconds or date."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    millis = lower.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = (lower.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    import email.utils  # an HTTP date is rare: the email package loads only for one

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


async def stream_with_retries(
    attempt: Callable[[], AsyncGenerator[StreamEvent, None]],  # aclosing needs aclose
    policy: RetryPolicy,
) -> AsyncIterator[StreamEvent]:
    """Run `attempt()` and re-run it on a retryable LLMHTTPError raised before its first event.

    A RetryNotice is yielded before each wait so a frontend can show a countdown. The
    last error is re-raised once retries run out, saying how many were made.
    """
    retries = 0
    while True:
        streamed = False
        try:
            # aclosing: a consumer that stops early (or is cancelled) closes the HTTP stream now.
            async with aclosing(attempt()) as events:
                async for event in events:
                    streamed = True
                    yield event
            return
        except LLMHTTPError as err:
            if streamed or err.status not in policy.statuses:
                raise
            hook = first_error_hook.get() if not retries else None
            if hook is not None and await hook(err):
                raise
            if retries >= policy.max_retries:
                if retries:
                    raise LLMHTTPError(
                        f"{err.message} (gave up after {retries} retries)",
                        status=err.status,
                        retry_after=err.retry_after,
                    ) from None
                raise
            delay = policy.delay(retries, err.retry_after)
            retries += 1
            yield RetryNotice(retries, delay, err.message)
            await asyncio.sleep(delay)
