"""Tracing: OpenTelemetry spans of turns, model requests, tool calls, plans and plan steps.

The spans follow the GenAI semantic conventions (`invoke_agent`, `chat`, `execute_tool`)
and carry the task ids of plan steps (`ollie.task.id`, `ollie.goal.id`), so a trace joins
to the rows of the task store. Tracing is off unless asked (`enable_tracing`, the
`OTEL_EXPORTER_OTLP_*` variables, `%config OllieMagics.tracing = True`): the turn loop
then talks to `Tracing`, whose hooks hand back what they were given, and opentelemetry is
never imported. Message contents are recorded only when
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and then redacted by the agent's
redactor. docs/TRACING.md lists every attribute.
"""

# long module: one concept, the traces: the no-op hooks, the OpenTelemetry ones, the switch.

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ollie_nb.errors import UnavailableError
from ollie_nb.llm import (
    Done,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    UsageReport,
)
from ollie_nb.planning import StepState
from ollie_nb.redaction import redact_data
from ollie_nb.tools import ToolResult

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, SpanContext, Tracer

    from ollie_nb.core._context import AgentContext
    from ollie_nb.core._events import TurnResult, TurnStarted
    from ollie_nb.llm import Backend
    from ollie_nb.planning import PlanRecord, StepRef

R = TypeVar("R")
Redact = Callable[[str], str]

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
SERVICE_NAME = "ollie-nb"  # unless OTEL_SERVICE_NAME says otherwise
MISSING_EXTRA = "tracing needs OpenTelemetry: pip install 'ollie-nb[otel]'"
KEPT_PLANS = 256  # plan spans remembered for the watch's links (goal id -> span context)

# The attributes of ollie's own (docs/TRACING.md); the gen_ai.* ones are the conventions'.
TASK_ID = "ollie.task.id"  # a step's task id in the task store (tasks plans only)
GOAL_ID = "ollie.goal.id"  # the task id of the plan's goal
PLAN_NUMBER = "ollie.plan.number"  # the plan's number in its session
STEP_ID = "ollie.step.id"  # the step's id in its plan: the task id, or `q2` in a queue plan
STEP_NUMBER = "ollie.step.number"  # 1-based, as the graph and the prompts say it
STEP_STATUS = "ollie.step.status"  # the step's state when its span ended
WORKER = "ollie.worker"  # who worked the step: the agent's name or a sub-agent's


class TracingUnavailableError(UnavailableError):
    """Tracing was asked for and the OpenTelemetry SDK (the `otel` extra) is not installed."""


class TracedCall(Protocol):
    """A tool call as the tool step works it: its answer is there once it ran."""

    @property
    def call(self) -> ToolCall: ...
    @property
    def server(self) -> str: ...
    @property
    def args(self) -> Any: ...
    @property
    def answer(self) -> ToolResult | None: ...


class StepSpan:
    """A worked step's span while it is worked: no-op here, an OpenTelemetry span when on."""

    @contextmanager
    def current(self) -> Iterator[None]:
        """The span is the parent of what starts inside (a sub-agent's turn)."""
        yield

    def end(self, state: StepState | None = None, error: str = "") -> None:
        """The step's state when its work ended; a failed step (or an `error`) is an error."""

    def settle(self, work: Awaitable[StepState], why: Callable[[], str]) -> Awaitable[StepState]:
        """`work` settles the step; the span ends with the state it settles at (`why` says
        what went wrong when it failed)."""
        return work


NO_STEP = StepSpan()


class Tracing:
    """Tracing off: every hook hands back what it was given and records nothing."""

    enabled = False
    capture = False  # message contents are recorded (redacted)

    @property
    def state(self) -> str:
        """Whether tracing is on, where spans go and whether they get there (`%ollie status`)."""
        return "off"

    def turn(
        self,
        context: AgentContext,
        session_id: str,
        start: TurnStarted,
        work: Awaitable[TurnResult],
    ) -> Awaitable[TurnResult]:
        """One turn: `invoke_agent`, the parent of its model requests and tool calls."""
        return work

    def chat(
        self,
        context: AgentContext,
        session_id: str,
        messages: Sequence[Message],
        stream: AsyncIterator[StreamEvent],
    ) -> AsyncIterator[StreamEvent]:
        """One model request: `chat`, from its first event to the stream's end."""
        return stream

    def tool(self, redact: Redact, pending: TracedCall, work: Awaitable[R]) -> Awaitable[R]:
        """One tool call that runs: `execute_tool`, until `pending` has its answer; an error
        result sets the span's error status."""
        return work

    def plan_made(self, redact: Redact, record: PlanRecord) -> None:
        """`reasoning_plan` made a plan: its goal id and steps join the call's span."""

    def plan_run(
        self, record: PlanRecord, width: int, work: Coroutine[Any, Any, R]
    ) -> Coroutine[Any, Any, R]:
        """A parallel run of a plan: the parent of its steps' spans."""
        return work

    def step_span(self, step: StepRef, goal_id: str, worker: str, detached: bool) -> StepSpan:
        """A worked step's span, ended by its `settle` (or `end`); `detached`: a trace of its
        own, linked to the span that made the plan (the watch's turns)."""
        return NO_STEP

    def step(
        self, step: StepRef, goal_id: str, worker: str, detached: bool, work: Awaitable[R]
    ) -> Awaitable[R]:
        """A step the agent works itself, around its turn."""
        return work

    def flush(self) -> None:
        """Export what has ended (a batch processor exports later by itself)."""

    def shutdown(self) -> None:
        """Flush and stop exporting."""


_OFF = Tracing()


class TracingSwitch:
    """Owns which Tracing is in force for the process: off until `enable` (or `from_env`,
    which AgentCore.start calls) turns it on; nothing is switched or hooked at import.

    The exit hook that exports the last spans is registered by the first `enable`, once.
    """

    def __init__(self) -> None:
        self.active: Tracing = _OFF
        self._env_read = False
        self._exit_hooked = False

    def enable(
        self,
        exporter: SpanExporter | None = None,
        provider: TracerProvider | None = None,
        capture_content: bool | None = None,
        batch: bool | None = None,
    ) -> Tracing:
        """Tracing on, on `provider`, else on one made here exporting to `exporter` (see
        enable_tracing)."""
        try:
            from opentelemetry.sdk.trace import TracerProvider as SdkProvider
        except ImportError:
            raise TracingUnavailableError(MISSING_EXTRA) from None
        capture = _capture_from_env() if capture_content is None else capture_content
        owned = provider is None
        report = ExportReport("your TracerProvider" if provider else "your exporter")
        if provider is None:
            provider = SdkProvider(resource=_resource())
            processor, report = _processor(exporter, batch, report)
            provider.add_span_processor(processor)
        self.disable()
        self.active = OtelTracing(provider, capture, owned, report)
        if not self._exit_hooked:
            atexit.register(self.disable)
            self._exit_hooked = True
        return self.active

    def disable(self) -> None:
        """Tracing off: what was recorded is exported, a provider made here is shut down."""
        active, self.active = self.active, _OFF
        active.shutdown()

    def from_env(self) -> None:
        """Once a process: an OTLP endpoint in the environment turns tracing on (unless
        OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none); without the extra, one line on stderr."""
        if self._env_read:
            return
        self._env_read = True
        if self.active.enabled or not any(os.environ.get(name) for name in ENDPOINT_VARS):
            return
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return
        if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
            return
        try:
            self.enable()
        except TracingUnavailableError as exc:  # the variable may be meant for other programs
            # one line on stderr (a cell shows it): a warning would go to logging, where
            # detect-secrets' captureWarnings sends it, and nobody reads it there
            print(f"ollie_nb: {ENDPOINT_VARS[1]} is set but {exc}", file=sys.stderr)


SWITCH = TracingSwitch()
"""The process's tracing switch: every agent of a process shares one tracer provider."""


def tracing() -> Tracing:
    """The tracing in force (the no-op one unless tracing was turned on)."""
    return SWITCH.active


def enable_tracing(
    exporter: SpanExporter | None = None,
    *,
    provider: TracerProvider | None = None,
    capture_content: bool | None = None,
    batch: bool | None = None,
) -> Tracing:
    """Turn tracing on for every agent of the process; returns it.

    `exporter`: where spans go (e.g. an InMemorySpanExporter); default OTLP over HTTP to
    OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT (the exporter reads the OTEL_* variables).
    `provider`: a TracerProvider of your own instead (its processors decide). `batch`:
    spans are exported in batches off the loop (default for OTLP) or one by one as each
    ends (default for an exporter given here). `capture_content`: record message
    contents, redacted; default OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT.
    An exporter given here stays yours: turning tracing off flushes it but does not shut
    it down, so it records again when tracing is turned on again.
    """
    return SWITCH.enable(exporter, provider, capture_content, batch)


def disable_tracing() -> None:
    """Turn tracing off: what was recorded is exported, a provider made here is shut down."""
    SWITCH.disable()


def tracing_from_env() -> None:
    """Once a process: an OTLP endpoint in the environment turns tracing on (see
    TracingSwitch.from_env); AgentCore.start calls it."""
    SWITCH.from_env()


def _capture_from_env() -> bool:
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() == "true"


def _resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    return Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME})


def _processor(
    exporter: SpanExporter | None, batch: bool | None, report: ExportReport
) -> tuple[SpanProcessor, ExportReport]:
    """The span processor of a provider made here, and the report of its exports."""
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    if exporter is None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise TracingUnavailableError(MISSING_EXTRA) from None
        otlp = OTLPSpanExporter()
        report = ExportReport(f"OTLP to {getattr(otlp, '_endpoint', '') or 'the default'}")
        # The SDK logs every retry of a failed export where a notebook shows it, in whatever
        # cell runs then: the report says it once instead (and %ollie status shows it).
        logging.getLogger(OTLP_LOGGER).setLevel(logging.CRITICAL)
        exporter = _reported(otlp, report)
        batch = True if batch is None else batch
    else:
        exporter = _borrowed(exporter)
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    return processor, report


OTLP_LOGGER = "opentelemetry.exporter.otlp.proto.http"


class ExportReport:
    """Where spans go and whether the last export went through; the first failure is said
    once, as ollie_nb's own line on stderr (the SDK's retry lines are kept quiet)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.failing = False
        self._said = False

    def exported(self, ok: bool) -> None:
        self.failing = not ok
        if not ok and not self._said:
            self._said = True
            print(
                f"ollie_nb: tracing could not export spans ({self.target}): nothing answered "
                f"or it refused them; check {ENDPOINT_VARS[1]}. Spans are dropped while it "
                "fails; this is said once (%ollie status shows tracing)",
                file=sys.stderr,
            )

    def __str__(self) -> str:
        return f"on: {self.target}" + ("; the last export failed" if self.failing else "")


def _reported(exporter: SpanExporter, report: ExportReport) -> SpanExporter:
    """`exporter`, each export's outcome told to `report`."""
    from opentelemetry.sdk.trace.export import SpanExporter as Base
    from opentelemetry.sdk.trace.export import SpanExportResult

    class Reported(Base):
        def export(self, spans: Sequence[Any]) -> Any:
            result = exporter.export(spans)
            report.exported(result is SpanExportResult.SUCCESS)
            return result

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return exporter.force_flush(timeout_millis)

        def shutdown(self) -> None:
            exporter.shutdown()

    return Reported()


def _borrowed(exporter: SpanExporter) -> SpanExporter:
    """The caller's exporter, which a processor's shutdown flushes but does not stop: a
    stopped exporter drops every later span without a word (re-enabling recorded nothing)."""
    from opentelemetry.sdk.trace.export import SpanExporter as Base

    class Borrowed(Base):
        def export(self, spans: Sequence[Any]) -> Any:
            return exporter.export(spans)

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return exporter.force_flush(timeout_millis)

        def shutdown(self) -> None:
            exporter.force_flush()

    return Borrowed()


# -- tracing on ------------------------------------------------------------------------------


class OtelTracing(Tracing):
    """Tracing on: the hooks open OpenTelemetry spans on `provider`'s tracer."""

    enabled = True

    def __init__(
        self, provider: TracerProvider, capture: bool, owned: bool, report: ExportReport
    ) -> None:
        from opentelemetry import trace

        self.report = report  # where spans go, and whether the last export went through
        self.provider = provider
        self.capture = capture
        self._owned = owned  # made by enable_tracing: shut down with it
        self._trace = trace
        self.tracer: Tracer = provider.get_tracer("ollie_nb", _version())
        self._plans: OrderedDict[str, SpanContext] = OrderedDict()  # goal id -> plan's span

    # -- turns and model requests --------------------------------------------------------

    def turn(
        self,
        context: AgentContext,
        session_id: str,
        start: TurnStarted,
        work: Awaitable[TurnResult],
    ) -> Awaitable[TurnResult]:
        return self._turn(context, session_id, start, work)

    async def _turn(
        self,
        context: AgentContext,
        session_id: str,
        start: TurnStarted,
        work: Awaitable[TurnResult],
    ) -> TurnResult:
        name = context.config.name or "agent"
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.conversation.id": session_id,
            **_model_attributes(context.backend),
        }
        if start.step is not None:
            attributes.update(_step_attributes(start.step))
        if self.capture:
            attributes["gen_ai.input.messages"] = _messages_json(
                [Message.user(start.prompt)], context.redact
            )
        with self.tracer.start_as_current_span(
            f"invoke_agent {name}", attributes=attributes, record_exception=False
        ) as span:
            result = await work
            span.set_attribute("ollie.turn.steps", result.steps)
            if result.interrupted:
                span.set_attribute("ollie.turn.interrupted", True)
            if result.step_limit:
                span.set_attribute("ollie.turn.step_limit", True)
            if result.error or result.blocked:
                self._error(span, result.error or result.blocked, "turn_error")
            if self.capture and result.reply:
                output = [Message.assistant(result.reply)]
                span.set_attribute("gen_ai.output.messages", _messages_json(output, context.redact))
            return result

    def chat(
        self,
        context: AgentContext,
        session_id: str,
        messages: Sequence[Message],
        stream: AsyncIterator[StreamEvent],
    ) -> AsyncIterator[StreamEvent]:
        return self._chat(context, messages, stream)

    async def _chat(
        self, context: AgentContext, messages: Sequence[Message], stream: AsyncIterator[StreamEvent]
    ) -> AsyncIterator[StreamEvent]:
        backend, config, redact = context.backend, context.config, context.redact
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", **_model_attributes(backend)}
        if config.max_tokens:
            attributes["gen_ai.request.max_tokens"] = config.max_tokens
        if config.temperature is not None:
            attributes["gen_ai.request.temperature"] = config.temperature
        if self.capture:
            attributes.update(_chat_input(messages, redact))
        span = self.tracer.start_span(f"chat {backend.model}", attributes=attributes)
        text: list[str] = []
        calls: tuple[Any, ...] = ()
        try:
            async for event in stream:
                if isinstance(event, UsageReport):
                    span.set_attributes(_usage_attributes(event.usage))
                elif isinstance(event, Done):
                    span.set_attribute("gen_ai.response.finish_reasons", [event.stop_reason])
                elif self.capture and isinstance(event, TextDelta):
                    text.append(event.text)
                elif self.capture and isinstance(event, ToolCallsReady):
                    calls = event.tool_calls
                yield event
        except BaseException as exc:
            self._error(span, redact(str(exc)) or type(exc).__name__, type(exc).__name__)
            raise
        finally:
            closer: Callable[[], Awaitable[Any]] | None = getattr(stream, "aclose", None)
            try:
                if closer is not None:
                    await closer()
            finally:
                if self.capture:
                    reply = [Message.assistant("".join(text), calls)]
                    span.set_attribute("gen_ai.output.messages", _messages_json(reply, redact))
                span.end()

    # -- tools and plans -----------------------------------------------------------------

    def tool(self, redact: Redact, pending: TracedCall, work: Awaitable[R]) -> Awaitable[R]:
        return self._tool(redact, pending, work)

    async def _tool(self, redact: Redact, pending: TracedCall, work: Awaitable[R]) -> R:
        call = pending.call
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
            "ollie.tool.server": pending.server,
        }
        if self.capture:
            shown = redact_data(pending.args, redact)
            attributes["gen_ai.tool.call.arguments"] = json.dumps(shown, ensure_ascii=False)
        with self.tracer.start_as_current_span(
            f"execute_tool {call.name}", attributes=attributes, record_exception=False
        ) as span:
            try:
                done = await work
            except BaseException as exc:
                self._error(span, type(exc).__name__, type(exc).__name__)
                raise
            result = pending.answer
            if result is not None and result.is_error:
                self._error(span, redact(result.text)[:200] if self.capture else "", "tool_error")
            if result is not None and self.capture:
                span.set_attribute("gen_ai.tool.call.result", redact(result.text))
            return done

    def plan_made(self, redact: Redact, record: PlanRecord) -> None:
        span = self._trace.get_current_span()
        if not span.is_recording():
            return
        span.set_attributes(
            {
                PLAN_NUMBER: record.number,
                "ollie.plan.steps": len(record.steps),
                "ollie.plan.kind": record.kind,
                "ollie.plan.backend": record.backend,
            }
        )
        if record.goal_id:
            span.set_attribute(GOAL_ID, record.goal_id)
            self._plans[record.goal_id] = span.get_span_context()
            while len(self._plans) > KEPT_PLANS:
                self._plans.popitem(last=False)
        if record.ids:
            span.set_attribute("ollie.task.ids", list(record.ids))
        if record.warning:
            span.set_attribute("ollie.plan.warning", redact(record.warning))
        if self.capture:
            span.set_attribute("ollie.plan.goal", redact(record.goal))

    def plan_run(
        self, record: PlanRecord, width: int, work: Coroutine[Any, Any, R]
    ) -> Coroutine[Any, Any, R]:
        return self._plan_run(record, width, work)

    async def _plan_run(self, record: PlanRecord, width: int, work: Awaitable[R]) -> R:
        attributes: dict[str, Any] = {
            PLAN_NUMBER: record.number,
            "ollie.plan.steps": len(record.steps),
            "ollie.plan.width": width,
        }
        if record.goal_id:
            attributes[GOAL_ID] = record.goal_id
        with self.tracer.start_as_current_span(
            f"run_plan {record.number}", attributes=attributes, record_exception=False
        ) as span:
            result = await work
            failed = getattr(result, "failed", ())
            if failed:
                self._error(span, f"failed: {', '.join(failed)}", "step_failed")
            if getattr(result, "interrupted", False):
                span.set_attribute("ollie.plan.interrupted", True)
            return result

    # -- steps ---------------------------------------------------------------------------

    def step_span(self, step: StepRef, goal_id: str, worker: str, detached: bool) -> StepSpan:
        attributes = {**_step_attributes(step), WORKER: worker}
        if goal_id:
            attributes[GOAL_ID] = goal_id
        links = []
        context = None
        if detached:  # a trace of its own, linked to where its plan was made
            from opentelemetry import context as otel_context
            from opentelemetry.trace import Link

            context = otel_context.Context()
            made = self._plans.get(goal_id)
            if made is not None:
                links.append(Link(made, {"ollie.link": "plan"}))
        span = self.tracer.start_span(
            f"work_step {step.step_id}", context=context, attributes=attributes, links=links
        )
        return _OtelStep(self, span)

    def step(
        self, step: StepRef, goal_id: str, worker: str, detached: bool, work: Awaitable[R]
    ) -> Awaitable[R]:
        return self._step(self.step_span(step, goal_id, worker, detached), work)

    async def _step(self, span: StepSpan, work: Awaitable[R]) -> R:
        try:
            with span.current():
                result = await work
        except BaseException as exc:
            span.end(error=type(exc).__name__)
            raise
        span.end(error=getattr(result, "error", "") or getattr(result, "blocked", ""))
        return result

    # -- the rest ------------------------------------------------------------------------

    def _error(self, span: Span, description: str, kind: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_status(Status(StatusCode.ERROR, description or None))
        span.set_attribute("error.type", kind)

    @property
    def state(self) -> str:
        return str(self.report)

    def flush(self) -> None:
        self.provider.force_flush()

    def shutdown(self) -> None:
        self.provider.force_flush()
        if self._owned:
            self.provider.shutdown()


class _OtelStep(StepSpan):
    """A step's OpenTelemetry span, ended once."""

    def __init__(self, tracing: OtelTracing, span: Span) -> None:
        self._tracing, self._span = tracing, span

    @contextmanager
    def current(self) -> Iterator[None]:
        with self._tracing._trace.use_span(self._span, end_on_exit=False):
            yield

    def settle(self, work: Awaitable[StepState], why: Callable[[], str]) -> Awaitable[StepState]:
        return self._settle(work, why)

    async def _settle(self, work: Awaitable[StepState], why: Callable[[], str]) -> StepState:
        try:
            state = await work
        except BaseException as exc:
            self.end(error=type(exc).__name__)
            raise
        self.end(state, why() if state is StepState.FAILED else "")
        return state

    def end(self, state: StepState | None = None, error: str = "") -> None:
        span = self._span
        if not span.is_recording():
            return
        if state is not None:
            span.set_attribute(STEP_STATUS, state.value)
            if state is StepState.FAILED:
                error = error or "the step failed"
        if error:
            self._tracing._error(span, error, "step_not_done")
        span.end()


def _version() -> str:
    from importlib import metadata  # zipfile, csv, email: only when tracing starts

    try:
        return metadata.version("ollie-nb")
    except metadata.PackageNotFoundError:
        return ""


# -- attributes ------------------------------------------------------------------------------


def _model_attributes(backend: Backend) -> dict[str, Any]:
    provider = getattr(backend, "name", "") or "unknown"
    return {
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,  # the name of earlier versions of the conventions
        "gen_ai.request.model": backend.model,
    }


def _usage_attributes(usage: Any) -> dict[str, Any]:
    attributes = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
    }
    if usage.cost is not None:
        attributes["ollie.usage.cost"] = usage.cost
    return attributes


def _step_attributes(step: StepRef) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        PLAN_NUMBER: step.plan,
        STEP_ID: step.step_id,
        STEP_NUMBER: step.number,
        "ollie.plan.kind": step.kind,
    }
    if step.task_id is not None:
        attributes[TASK_ID] = step.task_id
    return attributes


def _chat_input(messages: Sequence[Message], redact: Callable[[str], str]) -> dict[str, str]:
    system = [m for m in messages if m.role == "system"]
    rest = [m for m in messages if m.role != "system"]
    attributes = {"gen_ai.input.messages": _messages_json(rest, redact)}
    if system:
        parts = [{"type": "text", "content": redact(m.content)} for m in system]
        attributes["gen_ai.system_instructions"] = json.dumps(parts, ensure_ascii=False)
    return attributes


def _messages_json(messages: Sequence[Message], redact: Callable[[str], str]) -> str:
    """Messages as the conventions write them: role and parts, every text redacted."""
    return json.dumps([_message(m, redact) for m in messages], ensure_ascii=False)


def _message(message: Message, redact: Callable[[str], str]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if message.role == "tool":
        parts.append(
            {
                "type": "tool_call_response",
                "id": message.tool_call_id,
                "response": redact(message.content),
            }
        )
    elif message.content:
        parts.append({"type": "text", "content": redact(message.content)})
    for call in message.tool_calls:
        arguments = redact(call.arguments)
        parts.append(
            {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}
        )
    return {"role": message.role, "parts": parts}
