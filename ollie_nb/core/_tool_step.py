"""The tool step of a turn: the calls of one model response, in three phases.

approve: each call in call order is checked (name, arguments), shown to the preTool
hooks (which may deny it) and to the trust gate (which may ask the user), before any
call runs. run: the approved calls run together, at most MAX_PARALLEL at once; a call
that must run alone (its tool's server says so, or `sequentialTools` names it) runs
with none beside it; identical calls of a batch to a tool that changes nothing run once and
each of them gets that result (ollie's batch de-duplication). join: every call's result enters the history in call order, a
call that never finished (an interruption) answered as cancelled, so the history stays
one the providers accept.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ollie_nb.core._events import ToolCalled, ToolFinished, ToolRefused
from ollie_nb.core._guardrails import call_key, duplicates
from ollie_nb.core._hooks import HookOutcome
from ollie_nb.core._routing import StepScope, parse_arguments
from ollie_nb.core._tracing import tracing
from ollie_nb.llm import Message, ToolCall
from ollie_nb.planning.prompts import CANCELLED_RESULT
from ollie_nb.redaction import redact_data
from ollie_nb.tools import ToolResult

if TYPE_CHECKING:
    from ollie_nb.core._turn import TurnHost

MAX_PARALLEL = 8  # calls of one response running at once
Hooks = Callable[[str, dict[str, Any]], Awaitable[HookOutcome]]


@dataclass
class PendingCall:
    """One call of the response as the step works it; `answer` is its result once it has one."""

    call: ToolCall
    server: str
    args: Any
    bad_json: str
    alone: bool
    key: Hashable | None = None  # what an identical call shares; None: each call runs
    answer: ToolResult | None = None

    def payload(self) -> dict[str, Any]:
        """What the preTool and postTool hooks read of it (ollie's keys: args as JSON text)."""
        return {"tool": self.call.name, "server": self.server, "args": self.call.arguments}


class ToolStep:
    """The calls of one response: approve them, run them, join their results to the history."""

    def __init__(
        self,
        host: TurnHost,
        calls: Sequence[ToolCall],
        hooks: Hooks,
        scope: StepScope | None = None,
    ) -> None:
        self.host = host
        self._hooks = hooks
        self.scope = scope  # the step the turn works: what its task calls may change unasked
        router = host.router
        patterns = host.config.sequential_tools
        builtin_of = host.gate.builtin_of
        self.calls = []
        for call in calls:
            args, bad_json = parse_arguments(call.arguments)
            alone = router.runs_alone(call.name, patterns, builtin_of)
            key = call_key(call.name, args, call.name in router.read_only)
            server = router.server_of(call.name)
            self.calls.append(PendingCall(call, server, args, bad_json, alone, key))

    # -- approve -------------------------------------------------------------------

    async def approve(self) -> None:
        """Each call in call order: refused, denied by a preTool hook or the gate, or let run."""
        for pending in self.calls:
            pending.answer = await self._admit(pending)
            if pending.answer is not None:  # answered without running: shown at once
                self._started(pending)
                self._finished(pending, 0.0)

    async def _admit(self, pending: PendingCall) -> ToolResult | None:
        router = self.host.router
        refused = router.refusal(pending.call, pending.args, pending.bad_json)
        if refused is not None:
            return refused
        if self.host.config.hooks.get("preTool"):
            outcome = await self._hooks("preTool", pending.payload())
            if outcome.block:
                reason = self.host.redact(outcome.block)
                return ToolResult.error(f"a preTool hook denied {pending.call.name}: {reason}")
        denied = await router.approval(pending.call, pending.args, self.host.gate, self.scope)
        if denied is not None:
            shown = redact_data(pending.args, self.host.redact)
            call = pending.call
            self.host.emit(ToolRefused(call.id, call.name, pending.server, shown))
        return denied

    # -- run -----------------------------------------------------------------------

    async def run(self) -> None:
        """The approved calls, together; each batch ends before the next (one alone) starts.
        A call identical to an earlier read-only one of its batch takes that one's result."""
        limit = asyncio.Semaphore(MAX_PARALLEL)
        for batch in batches([p for p in self.calls if p.answer is None]):
            copies = duplicates(batch, lambda p: p.key)
            runs = [p for n, p in enumerate(batch) if n not in copies]
            tasks = [asyncio.ensure_future(self._traced(p, limit)) for p in runs]
            try:
                await asyncio.gather(*tasks)
            except Exception:  # a bug in one call: the others do not run on unseen
                for task in tasks:
                    task.cancel()
                raise
            for n, first in copies.items():
                self._copy(batch[n], batch[first])

    def _copy(self, pending: PendingCall, first: PendingCall) -> None:
        """An identical call answered with the result of the one that ran."""
        self._started(pending)
        pending.answer = first.answer
        self._finished(pending, 0.0)

    def _traced(self, pending: PendingCall, limit: asyncio.Semaphore) -> Awaitable[None]:
        """The call, in its execute_tool span when tracing."""
        return tracing().tool(self.host, pending, self._run_one(pending, limit))

    async def _run_one(self, pending: PendingCall, limit: asyncio.Semaphore) -> None:
        async with limit:
            host = self.host
            self._started(pending)
            host.state = f"tool:{pending.call.name}"
            started = time.perf_counter()
            result = await host.router.dispatch(pending.call, pending.args)  # redacted there
            if host.config.hooks.get("postTool"):
                result = await self._post_tool(pending, result)
            pending.answer = result
            self._finished(pending, time.perf_counter() - started)

    async def _post_tool(self, pending: PendingCall, result: ToolResult) -> ToolResult:
        """postTool hooks: exit 0 appends their output to the result, exit 2 replaces it."""
        outcome = await self._hooks("postTool", {**pending.payload(), "result": result.text})
        redact = self.host.redact
        if outcome.block:
            return replace(result, text=redact(outcome.block))
        if outcome.context:
            text = result.text + "\n" + redact("\n".join(outcome.context))
            return replace(result, text=text)
        return result

    def failed(self) -> list[bool]:
        """Per call, whether it failed (an error result, or no result at all)."""
        return [p.answer is None or p.answer.is_error for p in self.calls]

    # -- join ----------------------------------------------------------------------

    def join(self, tail: str = "") -> None:
        """Every result into the history in call order; `tail` (injected text, a plan reminder)
        rides on the last one, so no earlier message changes."""
        history = self.host.conversation.history
        for n, pending in enumerate(self.calls):
            answer = pending.answer
            text = answer.text if answer is not None else CANCELLED_RESULT
            if tail and n == len(self.calls) - 1:
                text += "\n\n" + tail
            images = answer.images if answer is not None else ()
            history.append(Message.tool(pending.call.id, text, pending.call.name, images))

    # -- events --------------------------------------------------------------------

    def _started(self, pending: PendingCall) -> None:
        call, host = pending.call, self.host
        shown = redact_data(pending.args, host.redact)
        host.emit(ToolCalled(call.id, call.name, pending.server, shown))  # what cells show

    def _finished(self, pending: PendingCall, seconds: float) -> None:
        call, answer = pending.call, pending.answer
        assert answer is not None
        self.host.emit(
            ToolFinished(
                call.id,
                call.name,
                pending.server,
                answer.text,
                answer.is_error,
                round(seconds, 3),
                shown=answer.shown,
            )
        )


def batches(calls: Sequence[PendingCall]) -> Iterator[list[PendingCall]]:
    """The calls in order as runs that may overlap: neighbours that may run together share a
    batch, and a call that must run alone is a batch of its own."""
    batch: list[PendingCall] = []
    for pending in calls:
        if pending.alone:
            if batch:
                yield batch
                batch = []
            yield [pending]
        else:
            batch.append(pending)
    if batch:
        yield batch
