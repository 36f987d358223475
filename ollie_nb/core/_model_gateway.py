"""The model gateway: every model request of an agent goes through `send_request`.

Turns, sub-agents, workers, review turns and compaction of either kind all ask here, so
the rules of a request live in one place: images older than the last few are left out
(core/_history.py), the spend caps of its ledger chain are checked and its known input is
reserved on the chain (a request sent meanwhile sees it), the request's span is opened, and
its usage is priced, settled on the chain and on the conversation's totals, and told as an
event. No other module calls `chat_stream`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ollie_nb.core._budget import Ledger
from ollie_nb.core._events import Event, UsageReported
from ollie_nb.core._history import UsageTotals, estimate_tokens, older_images_described
from ollie_nb.core._tracing import TracedHost, tracing
from ollie_nb.llm import GenerationParams, Message, StreamEvent, Usage, UsageReport, priced
from ollie_nb.planning import Spend

if TYPE_CHECKING:
    from ollie_nb.llm import ToolDef


@dataclass(frozen=True)
class Meter:
    """Where a request is counted: its ledger chain (the caps), the conversation's usage
    totals, and the sink told of each response's usage."""

    ledger: Ledger
    totals: UsageTotals
    emit: Callable[[Event], None]


async def send_request(
    host: TracedHost,
    meter: Meter,
    messages: Sequence[Message],
    params: GenerationParams,
    tools: Sequence[ToolDef] = (),
) -> AsyncGenerator[StreamEvent, None]:
    """Stream one model request of `host`'s backend, counted in `meter`.

    Raises BudgetExceededError before sending when a cap of the chain is reached by the
    spend plus the requests in flight; usage reports come out priced.
    """
    backend = host.backend
    messages = older_images_described(messages)  # each image is sent again every request
    size = estimate_tokens("", messages)
    estimate = Spend(size, _input_cost(size, backend.name, backend.model))
    held = meter.ledger.reserve(estimate)  # refused here: nothing is sent or counted
    meter.totals.requests += 1
    stream = tracing().chat(host, messages, backend.chat_stream(messages, tools, params))
    try:
        async for event in stream:
            if isinstance(event, UsageReport):
                event = UsageReport(
                    _settle(meter, priced(event.usage, backend.name, backend.model))
                )
            yield event
    finally:
        held.release()
        closer: Callable[[], Any] | None = getattr(stream, "aclose", None)
        if closer is not None:
            await closer()


def _settle(meter: Meter, usage: Usage) -> Usage:
    """Count a priced response in the chain and the totals, and tell it."""
    meter.ledger.add(usage)
    totals = meter.totals
    totals.add(usage)
    meter.emit(
        UsageReported(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_input=totals.input_tokens,
            total_output=totals.output_tokens,
            requests=totals.requests,
        )
    )
    return usage


def _input_cost(tokens: int, backend: str, model: str) -> float:
    """What `tokens` of input cost on the model (0 when no price is known)."""
    return priced(Usage(input_tokens=tokens), backend, model).cost or 0.0
