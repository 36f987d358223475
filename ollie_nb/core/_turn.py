"""The turn loop, one method per phase: prompt hooks, model step, tool step, stop hooks.

A turn takes one prompt to a final reply: the model is called, the tool calls it
makes are run and answered, and the model is called again, until it answers
without tool calls (or the step limit, a model error or an interruption ends it).
The runner is handed the agent's context (what its parts share) and its turn state.
"""

# long module: one concept, the turn loop: its phases and the pieces they share.

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from ollie_nb.core._budget import BudgetExceededError
from ollie_nb.core._compact import COMPACT_AT, Compaction, needs_compaction
from ollie_nb.core._config import AgentConfig
from ollie_nb.core._context import AgentContext, Phase, TurnState
from ollie_nb.core._events import (
    Notice,
    ReasoningDelta,
    Retrying,
    TextDelta,
    TurnEnded,
    TurnResult,
    TurnStarted,
)
from ollie_nb.core._guardrails import (
    NUDGE,
    ContextWarning,
    FailedRounds,
    FailingToolsError,
    RoundVerdict,
)
from ollie_nb.core._history import close_interrupted
from ollie_nb.core._hooks import HookOutcome, run_hooks
from ollie_nb.core._model_gateway import send_request
from ollie_nb.core._routing import StepScope
from ollie_nb.core._tool_step import ToolStep
from ollie_nb.core._tracing import tracing
from ollie_nb.llm import (
    ContextOverflowError,
    GenerationParams,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    Message,
    RetryNotice,
    StreamEvent,
    ThinkingBlock,
    ThinkingReady,
    ToolCall,
    ToolCallsReady,
    ToolUseFailedError,
    first_error_hook,
)
from ollie_nb.llm import ReasoningDelta as ReasoningChunk
from ollie_nb.llm import TextDelta as TextChunk

MAX_STOP_CONTINUES = 5
MAX_TOOL_USE_RETRIES = 2  # a provider refusing a malformed tool call: the model tries again
MIN_COMPACT_TOKENS = 1000  # below this the context window is not even asked for
log = logging.getLogger("ollie_nb.core")


class _Ended(Exception):
    """A phase ended the turn; carries the result."""

    def __init__(self, result: TurnResult) -> None:
        self.result = result


class TurnRunner:
    """Runs the turns of one agent (or sub-agent) on its state, each with the context it is
    handed; `partial` holds the reply text streamed so far."""

    def __init__(self, state: TurnState, context: AgentContext | None = None) -> None:
        self.state = state
        self._context = context  # the context of the turn running (or the last one)
        self.partial: list[str] = []
        self.last_text = ""  # the latest model response's text
        self.interrupting = False  # set by AgentCore.interrupt: a user's stop, not a shutdown
        self.carried: list[str] = []  # postTurn hook output, for the next turn's prompt
        self.last_error = ""  # the traceback of the last internal error (for `%ollie debug`)
        self.tool_rounds = 0  # tool steps run, across turns: the plan reminder's clock
        self.error_hooked: bool | None = None  # what the turnError hooks said before a retry
        self.failed_rounds = FailedRounds()  # this turn's rounds in which every call failed
        self.context_warning = ContextWarning()  # said once, again after a compaction
        self.scope: StepScope | None = None  # the stored step this turn works, if any

    @property
    def context(self) -> AgentContext:
        assert self._context is not None, "a turn runs with a context"
        return self._context

    async def run(self, context: AgentContext, start: TurnStarted) -> TurnResult:
        """One turn; an internal error runs the turnError hooks and is kept for `%ollie debug`."""
        self._context = context
        try:
            return await tracing().turn(context, self.state.session_id, start, self._run(start))
        except Exception as exc:
            self.last_error = traceback.format_exc()
            message = f"internal error: {type(exc).__name__}: {context.redact(str(exc))}"
            await self._turn_error(message, "internal")
            self.state.enter(Phase.IDLE)
            raise

    async def _run(self, start: TurnStarted) -> TurnResult:
        """Prompt hooks, compaction if due, then model and tool steps until a final reply."""
        context, conversation = self.context, self.state.conversation
        self.scope, self.state.step = StepScope.of(start.step, start.asker), start.step
        context.emit(start)
        try:
            prompt = await self._prompt_hooks(start.prompt)
        except _Ended as ended:
            return ended.result
        await self._compact_if_due()
        conversation.history.append(Message.user(prompt))
        self.partial = []
        self.failed_rounds = FailedRounds(
            context.config.failed_rounds_nudge, context.config.failed_rounds_limit
        )
        steps = 0
        stop_continues = [0]
        hooked = first_error_hook.set(self._first_error)
        try:
            while True:
                steps += 1
                calls = await self._model_step(steps)
                if calls:
                    verdict = await self._tool_step(calls)
                    self.context.save_round()
                    if verdict is RoundVerdict.STOP:
                        self._stop_failing(steps)
                elif not await self._continue_after_reply(stop_continues):
                    await self._post_turn()
                    return self.end(TurnResult(reply=self.last_text, steps=steps))
        except _Ended as ended:
            result = ended.result
            if result.error:
                said = self.error_hooked
                if said is None:  # the hooks were not asked before a retry: ask them now
                    said = await self._turn_error(result.error, error_kind(ended.__cause__))
                result.error_handled = said
            return result
        except asyncio.CancelledError:
            conversation.history[:] = close_interrupted(conversation.history, "".join(self.partial))
            self.partial = []
            result = self.end(TurnResult(reply="", interrupted=True, steps=steps))
            if not self.interrupting:
                raise
            _uncancel()
            return result
        finally:
            first_error_hook.reset(hooked)

    # -- phases ----------------------------------------------------------------

    async def _prompt_hooks(self, prompt: str) -> str:
        """userPromptSubmit hooks (may block or add context), then preTurn hooks' context."""
        context = self.context
        outcome = await self.hooks("userPromptSubmit", {"prompt": prompt})
        if outcome.block:
            reason = context.redact(outcome.block)
            context.emit(Notice(f"prompt blocked by a userPromptSubmit hook: {reason}", "error"))
            result = TurnResult(blocked=reason)
            context.emit(TurnEnded(result))
            raise _Ended(result)
        before = await self.hooks("preTurn", {"prompt": prompt})
        added = [*self.carried, *outcome.context, *before.context]
        self.carried = []
        if added:
            prompt += "\n\n" + "\n".join(context.redact(c) for c in added)
        return prompt

    async def _compact_if_due(self) -> None:
        """Compact first when the context reaches 75% of the model's window (ollie's rule)."""
        context, conversation = self.context, self.state.conversation
        size = self.context_size() if conversation.history else 0
        if size < MIN_COMPACT_TOKENS:  # no model's window is that small: skip the probe
            self.context_warning.rearm()  # far below any window's warning mark
            return
        try:
            window = await context.backend.context_length()
        except Exception as exc:  # an unknown window: no automatic compaction this turn
            log.info("context length unknown: %s", exc)
            return
        if not needs_compaction(size, window):
            warning = self.context_warning.check(size, window) if window else ""
            if warning:
                context.emit(Notice(warning, "warning"))
            return
        context.emit(
            Notice(
                f"context at {size} of {window} tokens (over {COMPACT_AT:.0%}): compacting first"
            )
        )
        try:
            done = await self.compact(context)
        except LLMError as exc:
            context.emit(
                Notice(f"compaction failed: {context.redact(str(exc))}; the history is kept")
            )
            return
        except BudgetExceededError:  # not sent: the history is kept, and the turn's own
            return  # request meets the same cap and ends the turn with its line
        self.context_warning.rearm()  # ollie's reset: a compacted context is warned about again
        context.emit(Notice(done.note))

    async def _post_turn(self) -> None:
        """postTurn hooks: their output joins the context of the next turn."""
        outcome = await self.hooks("postTurn", {"reply": self.last_text})
        self.carried.extend(outcome.context)

    async def _turn_error(self, message: str, kind: str) -> bool:
        """turnError hooks, told what went wrong; True when they handled it (all exited 0),
        which is said in one line with their output."""
        context = self.context
        try:
            outcome = await self.hooks("turnError", {"error": message, "error_type": kind})
        except Exception as exc:  # a failing hook must not hide the turn's own error
            context.emit(Notice(f"turnError hook failed: {type(exc).__name__}"))
            return False
        if outcome.handled:
            said = context.redact("\n".join(outcome.context))
            context.emit(
                Notice("a turnError hook handled the error" + (f": {said}" if said else ""))
            )
        return outcome.handled

    async def _first_error(self, error: LLMHTTPError) -> bool:
        """Before a request is retried: the turnError hooks; True (handled) skips the retries."""
        self.error_hooked = await self._turn_error(
            self.context.redact(str(error)), error_kind(error)
        )
        return self.error_hooked

    async def _model_step(self, steps: int) -> tuple[ToolCall, ...]:
        """One model call (within maxSteps); the reply joins the history."""
        context, conversation = self.context, self.state.conversation
        limit = context.config.max_steps
        if steps > limit:
            note = (
                f"stopped: this turn reached maxSteps ({limit} model calls); "
                "send a prompt or `%ollie run` to continue"
            )
            context.emit(Notice(note))
            conversation.history.append(Message.assistant(f"[{note}]"))
            result = TurnResult(reply=conversation.reply, steps=steps - 1, step_limit=True)
            raise _Ended(self.end(result))
        self.error_hooked = None
        try:
            reply = await self._respond_recovering()
        except (LLMError, BudgetExceededError) as exc:  # shown and kept; never sent to the model
            message = context.redact(str(exc))
            context.emit(Notice(message, "error"))
            conversation.record_error(message)
            result = TurnResult(error=message, steps=steps, failure=exc)
            raise _Ended(self.end(result)) from exc
        conversation.history.append(reply)
        self.partial = []
        self.last_text = reply.content
        if reply.content:
            conversation.reply = reply.content
        return reply.tool_calls

    async def _respond_recovering(self) -> Message:
        """One model response; a refused tool call is told to the model and tried again
        (bounded), and a context overflow compacts the history and retries once."""
        context, conversation = self.context, self.state.conversation
        refused = 0
        compacted = False
        while True:
            try:
                return await self.respond()
            except ToolUseFailedError as exc:
                if refused >= MAX_TOOL_USE_RETRIES:
                    raise
                refused += 1
                self.partial = []
                reason = context.redact(str(exc))
                context.emit(
                    Notice(f"the provider refused a tool call; the model retries: {reason}")
                )
                note = Message.user(context.redact(tool_use_failed_note(exc)))
                conversation.history.append(note)
            except ContextOverflowError:
                if compacted:
                    raise
                compacted = True
                self.partial = []
                context.emit(
                    Notice("the context is too long for the model: compacting, then retrying")
                )
                done = await self.compact(context)
                context.emit(Notice(done.note))

    async def _tool_step(self, calls: Sequence[ToolCall]) -> RoundVerdict:
        """Approve the calls in call order, run the approved ones together, join the results in
        call order (ToolStep); an interruption still answers every call. Says whether the
        failing-rounds guard nudges the model or stops the turn."""
        step = ToolStep(self.context, self.state, calls, self.hooks, self.scope)
        try:
            await step.approve()
            await step.run()
        except BaseException:
            step.join()
            raise
        verdict = self.failed_rounds.record(step.failed())
        step.join(await self._round_notes(verdict is RoundVerdict.NUDGE))
        return verdict

    def _stop_failing(self, steps: int) -> None:
        """End the turn: every call failed in failedRoundsLimit rounds in a row."""
        context, conversation = self.context, self.state.conversation
        note = self.failed_rounds.stop_note()
        context.emit(Notice(note, "error"))
        conversation.history.append(Message.assistant(f"[{note}]"))
        result = TurnResult(reply=conversation.reply, error=note, steps=steps)
        raise _Ended(self.end(result)) from FailingToolsError(note)

    async def _round_notes(self, nudge: bool = False) -> str:
        """What rides on a round's last result: text the user injected meanwhile, the nudge of
        a run of failing rounds, and every planReminder rounds (or with the nudge) the open
        plan (a note at the tail: no earlier message changes)."""
        context = self.context
        notes = []
        injected = context.injected()
        if injected:
            notes.append("[user interruption] " + "\n".join(injected))
        if nudge:
            notes.append(NUDGE)
        self.tool_rounds += 1
        every = context.config.plan_reminder
        if nudge or (every and self.tool_rounds % every == 0):
            reminder = await context.reminder()
            if reminder:
                notes.append(reminder)
        return "\n\n".join(notes)

    async def _continue_after_reply(self, stop_continues: list[int]) -> bool:
        """After a reply without calls: a stop hook or injected text may keep the turn going."""
        context, conversation = self.context, self.state.conversation
        if context.config.hooks.get("stop") and stop_continues[0] < MAX_STOP_CONTINUES:
            outcome = await self.hooks("stop", {"reply": self.last_text})
            if outcome.block:
                stop_continues[0] += 1
                reason = context.redact(outcome.block)
                context.emit(Notice(f"a stop hook asked to continue: {reason}"))
                conversation.history.append(Message.user(reason))
                return True
        injected = context.injected()
        if injected:
            conversation.history.append(Message.user("\n".join(injected)))
            return True
        return False

    # -- pieces ----------------------------------------------------------------

    async def hooks(self, event: str, payload: dict[str, Any]) -> HookOutcome:
        """Run the config's hooks for `event`; warnings become info notices."""
        context = self.context
        commands = context.config.hooks.get(event)
        if not commands:
            return HookOutcome()
        body = {**payload, "cwd": context.workdir, "session_id": self.state.session_id}
        env = context.subprocess_environ()
        outcome = await run_hooks(event, commands, body, context.workdir, env=env)
        for warning in outcome.warnings:
            context.emit(Notice(context.redact(warning)))
        return outcome

    async def respond(self) -> Message:
        """Stream one model response (through the model gateway) as the assistant Message;
        emit text and retries as they come (reasoning only sets the state: it never joins
        the reply)."""
        context, conversation = self.context, self.state.conversation
        messages = [Message.system(context.system_prompt()), *conversation.history]
        calls: tuple[ToolCall, ...] = ()
        thinking: tuple[ThinkingBlock, ...] = ()
        tools = context.router.defs if context.config.tools else ()
        stream = send_request(context, self.state, messages, params(context.config), tools)
        self.state.enter(Phase.WAITING)
        try:
            async for event in stream:
                if isinstance(event, TextChunk):
                    self.state.enter(Phase.STREAMING)
                    self.partial.append(event.text)
                    context.emit(TextDelta(event.text))
                elif isinstance(event, ReasoningChunk):
                    self.state.enter(Phase.THINKING)
                    context.emit(ReasoningDelta(event.text))
                elif isinstance(event, ToolCallsReady):
                    calls = event.tool_calls
                elif isinstance(event, ThinkingReady):
                    thinking = event.blocks
                elif isinstance(event, RetryNotice):
                    context.emit(Retrying(event.reason, event.attempt, event.delay))
        finally:
            await stream.aclose()
        return Message.assistant("".join(self.partial), calls, thinking)

    def context_size(self) -> int:
        """Tokens the next request will send: the last reported input size, else an estimate
        (a sub-agent's: the last reported size)."""
        conversation = self.state.conversation
        if not self.context.compacts:
            return conversation.usage.last_input_tokens
        return conversation.context_size(self.context.system_prompt())

    async def compact(self, context: AgentContext) -> Compaction:
        """Compact now (also from inside a turn): pre/postCompact hooks, archive, then save;
        counted as the turn's requests are. A sub-agent's history is not compacted."""
        if not context.compacts:
            return Compaction(None, "a sub-agent's history is not compacted")
        self._context = context

        def send(messages: Sequence[Message]) -> AsyncGenerator[StreamEvent, None]:
            return send_request(context, self.state, messages, params(context.config))

        conversation, prompt = self.state.conversation, context.system_prompt()
        done = await conversation.compact_history(
            context.backend, prompt, send, self.hooks, context.redact
        )
        if done.history is not None:
            context.save_session()
        return done

    def end(self, result: TurnResult) -> TurnResult:
        self.state.enter(Phase.IDLE)
        self.context.emit(TurnEnded(result))
        return result


def params(config: AgentConfig) -> GenerationParams:
    """The generation knobs of an agent config."""
    return GenerationParams(
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        frequency_penalty=config.frequency_penalty,
        presence_penalty=config.presence_penalty,
        top_p=config.top_p,
        top_k=config.top_k,
        min_p=config.min_p,
        reasoning_effort=config.reasoning_effort,
        thinking_budget=config.thinking_budget,
        max_completion_tokens=config.max_completion_tokens,
        prompt_cache=config.prompt_cache,
    )


def error_kind(exc: BaseException | None) -> str:
    """The turnError payload's `error_type` for a failed model call (ollie's words)."""
    if isinstance(exc, ContextOverflowError):
        return "context_overflow"
    if isinstance(exc, LLMHTTPError) and exc.status == 429:
        return "rate_limit"
    if isinstance(exc, LLMConnectionError) or (isinstance(exc, LLMHTTPError) and exc.status >= 500):
        return "transient"
    if isinstance(exc, ToolUseFailedError):
        return "tool_use_failed"
    if isinstance(exc, BudgetExceededError):
        return "budget"
    if isinstance(exc, FailingToolsError):
        return "tool_errors"
    return "unknown"


def tool_use_failed_note(exc: ToolUseFailedError) -> str:
    """What the model is told when the provider refused its tool call."""
    generation = exc.failed_generation
    if len(generation) > 2000:
        generation = generation[:2000] + "..."
    return (
        f"[tool call refused by the provider: {exc.message}]\n"
        f"Your last response was not a valid tool call:\n{generation}\n"
        "Call the tool again with arguments that match its schema."
    )


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None and hasattr(task, "uncancel"):
        task.uncancel()
