"""What tracing costs a turn: the offline turn loop with tracing off and on, side by side.

Three variants, each a batch of turns from an empty history, run in rotation: the same
backend's stream drained alone (the bare turn), AgentCore.submit with tracing off (the no-op
hooks: this must stay the turns row's figure), and AgentCore.submit with tracing on, spans handed to
a BatchSpanProcessor (as OTLP export runs: off the loop) with an in-memory exporter, so the
figure is the cost on the loop without a network in it. Tracing is turned on and off inside
its batch: the flush at the end is counted too.
"""

from __future__ import annotations

from bench._report import Figure
from bench._run import Row, Settings, alternate, median, paired_ratio
from ollie_nb.core import AgentCore, disable_tracing, enable_tracing
from ollie_nb.llm import Message, OfflineBackend, TextDelta

REPLY = "Done: the cell ran and the numbers look right."


def _reply(messages: list[Message], tools: list) -> str:
    return REPLY


async def run(settings: Settings) -> list[Figure]:
    """Turn rates: tracing off against the bare stream, tracing on against tracing off."""
    try:
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        return [Figure(what="tracing", unit="ms", ours=None, note="needs ollie-nb[otel]")]
    batches, turns = settings.repeats(15, 3), settings.size(50, 3)
    core = AgentCore(
        OfflineBackend(_reply), workdir=settings.scratch, autosave=False, execute=False
    )
    await core.start()
    backend = OfflineBackend(_reply)
    tools = core.tools
    exported: list[int] = []

    async def turns_of_core() -> None:
        core.session.clear()
        for i in range(turns):
            result = await core.submit(f"Prompt number {i}: run the next cell")
            if result.reply != REPLY:
                raise RuntimeError(f"unexpected reply {result.reply!r}")

    async def traced() -> None:
        exporter = InMemorySpanExporter()
        enable_tracing(exporter, batch=True)
        try:
            await turns_of_core()
        finally:
            disable_tracing()  # flushes: every span is exported before the batch ends
        exported.append(len(exporter.get_finished_spans()))

    async def bare() -> None:
        messages = [Message.system(core.system_prompt())]
        for i in range(turns):
            messages.append(Message.user(f"Prompt number {i}: run the next cell"))
            stream = backend.chat_stream(messages, tools)
            text = [e.text async for e in stream if isinstance(e, TextDelta)]
            messages.append(Message.assistant("".join(text)))

    try:
        await turns_of_core()  # warm-up
        await traced()
        variants = {"off": turns_of_core, "on": traced, "bare": bare}
        times = await alternate(variants, batches)
    finally:
        disable_tracing()
        await core.aclose()
    if set(exported) != {2 * turns}:  # a turn span and a chat span per turn
        raise RuntimeError(f"spans exported per batch: {sorted(set(exported))}, not {2 * turns}")
    off, on, bare_turn = (median(times[k]) / turns for k in ("off", "on", "bare"))
    return [
        Figure(
            what="turns, tracing off (no-op hooks)",
            unit="/s",
            ours=1 / off,
            baseline=1 / bare_turn,
            baseline_what="the same backend's stream drained alone (as in the turns row)",
            samples=batches,
            paired=paired_ratio(times["off"], times["bare"]),
            note=f"{(off - bare_turn) * 1e6:.0f} µs of loop per turn ({turns} turns a sample)",
        ),
        Figure(
            what="turns, tracing on (batched, in-memory exporter)",
            unit="/s",
            ours=1 / on,
            baseline=1 / off,
            baseline_what="the same turns with tracing off",
            samples=batches,
            paired=paired_ratio(times["on"], times["off"]),
            note=f"{(on - off) * 1e6:.0f} µs of tracing per turn (2 spans a turn)",
        ),
    ]


ROW = Row("tracing", "Tracing: the turn loop with spans off and on", run)
