"""The model gateway: every model request of an agent goes through `send_request`.

Turns, sub-agents, workers, review turns and compaction of either kind all ask here, so
the rules of a request live in one place: images older than the last few are left out
(core/_history.py), the spend caps of its ledger chain are checked and its known input is
reserved on the chain (a request sent meanwhile sees it); a request at a reached cap asks
the task store's inbox when asking is on (core/_cap_ask.py); the request's span is opened, and
its usage is priced, settled on the chain and on the conversation's totals, and told as an
event. No other module calls `chat_stream`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ollie_nb.core._budget import BudgetExceededError, Reservation
from ollie_nb.core._events import UsageReported
from ollie_nb.core._history import UsageTotals, older_images_described
from ollie_nb.core._tracing import tracing
from ollie_nb.llm import GenerationParams, Message, StreamEvent, Usage, UsageReport, priced
from ollie_nb.planning import Spend

if TYPE_CHECKING:
    from ollie_nb.core._context import AgentContext, TurnState
    from ollie_nb.llm import ToolDef


async def send_request(
    context: AgentContext,
    state: TurnState,
    messages: Sequence[Message],
    params: GenerationParams,
    tools: Sequence[ToolDef] = (),
) -> AsyncGenerator[StreamEvent, None]:
    """Stream one model request of the context's backend, counted in the state's ledger chain
    and conversation (and a sub-agent's in its parent's conversation too).

    Raises BudgetExceededError before sending when a cap of the chain is reached by the
    spend plus the requests in flight (and, with asking on, not raised by the answer);
    usage reports come out priced.
    """
    backend = context.backend
    messages = older_images_described(messages)  # each image is sent again every request
    size = state.request_size("", messages)
    estimate = Spend(size, _input_cost(size, backend.name, backend.model))
    held = await _reserve(context, state, estimate)  # refused here: nothing sent or counted
    for totals in _totals(state):
        totals.requests += 1
    sent = backend.chat_stream(messages, tools, params)
    stream = tracing().chat(context, state.session_id, messages, sent)
    try:
        async for event in stream:
            if isinstance(event, UsageReport):
                usage = priced(event.usage, backend.name, backend.model)
                event = UsageReport(_settle(context, state, usage))
            yield event
    finally:
        held.release()
        closer: Callable[[], Any] | None = getattr(stream, "aclose", None)
        if closer is not None:
            await closer()


async def _reserve(context: AgentContext, state: TurnState, estimate: Spend) -> Reservation:
    """Hold the request on its ledger chain; at a reached cap with asking on, the request
    waits for the answer (one per cap) and goes on if the cap was raised."""
    while True:
        try:
            return state.ledger.reserve(estimate)
        except BudgetExceededError as error:
            asking = context.cap_ask
            if asking is None or not await asking.settle(error, state.step):
                raise


def _totals(state: TurnState) -> list[UsageTotals]:
    """The usage totals a request of `state` counts in: its own, and its parent's."""
    own = state.conversation.usage
    return [own] if state.parent is None else [own, state.parent.usage]


def _settle(context: AgentContext, state: TurnState, usage: Usage) -> Usage:
    """Count a priced response in the chain and the totals, and tell it."""
    state.ledger.add(usage)
    totals = state.conversation.usage
    totals.add(usage)
    if state.parent is not None:  # the parent's context size stays its own
        state.parent.usage.add(usage, context=False)
    context.emit(
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
