"""The turn loop with the offline backend, and a 10,000-message session.

The turn rate is timed in batches of turns from an empty history, interleaved with the
same backend's stream drained alone over a message list grown the same way. The session
is 2,500 rounds of a user prompt, an assistant tool call, its result and an assistant
reply, built as the turn loop builds its history.
"""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings, alternate, median, paired_ratio
from ollie_nb.core import AgentCore
from ollie_nb.llm import Message, OfflineBackend, TextDelta, ToolCall

REPLY = "Done: the cell ran and the numbers look right."
SESSION_MESSAGES = 10_000
SMOKE_MESSAGES = 40
_WORDS = (
    "the",
    "plan",
    "step",
    "data",
    "chart",
    "report",
    "clean",
    "collect",
    "publish",
    "run",
    "cell",
    "result",
    "value",
    "table",
    "figure",
    "region",
    "quarter",
    "sales",
    "check",
    "draft",
    "summary",
    "outlier",
    "load",
    "compare",
)


def session_messages(count: int = SESSION_MESSAGES, seed: int = 3) -> list[Message]:
    """A realistic history: prompt, tool call, tool result, reply, repeated."""
    rng = random.Random(seed)

    def text(words: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(words))

    messages: list[Message] = []
    for i in range(count // 4):
        call = ToolCall(f"call_{i}", "execute_code", json.dumps({"code": text(10)}))
        messages += [
            Message.user(text(20)),
            Message.assistant("", [call]),
            Message.tool(call.id, text(30), name="execute_code"),
            Message.assistant(text(40)),
        ]
    return messages


def _reply(messages: list[Message], tools: list) -> str:
    return REPLY


def _traced_bytes_per_message(count: int) -> float:
    tracemalloc.start()
    try:
        messages = session_messages(count)
        size, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return size / len(messages)


async def run(settings: Settings) -> list[Figure]:
    """Turn rate against the bare stream, then the memory and the costs of a long session."""
    batches, turns = settings.repeats(15, 3), settings.size(50, 3)
    count = settings.size(SESSION_MESSAGES, SMOKE_MESSAGES)
    core = AgentCore(
        OfflineBackend(_reply), workdir=settings.scratch, autosave=False, execute=False
    )
    await core.start()
    backend = OfflineBackend(_reply)
    tools = core.tools

    async def ours() -> None:
        core.session.clear()
        for i in range(turns):
            result = await core.submit(f"Prompt number {i}: run the next cell")
            if result.reply != REPLY:
                raise RuntimeError(f"unexpected reply {result.reply!r}")

    async def bare() -> None:
        messages = [Message.system(core.system_prompt())]
        for i in range(turns):
            messages.append(Message.user(f"Prompt number {i}: run the next cell"))
            stream = backend.chat_stream(messages, tools)
            text = [e.text async for e in stream if isinstance(e, TextDelta)]
            messages.append(Message.assistant("".join(text)))

    try:
        await ours()  # warm-up
        times = await alternate({"ours": ours, "bare": bare}, batches)
        per_turn, bare_turn = median(times["ours"]) / turns, median(times["bare"]) / turns

        long_history = session_messages(count)
        samples = settings.repeats(5, 2)

        async def long_turn() -> None:
            core.session.history = list(long_history)
            await core.submit("One more prompt")

        async def short_turn() -> None:
            core.session.clear()
            await core.submit("One more prompt")

        turn_times = await alternate({"long": long_turn, "short": short_turn}, samples)

        core.session.history = list(long_history)
        path = Path(settings.scratch) / "plain-session.json"

        async def save() -> None:
            core.session.history = list(long_history)  # a new history: the file is rewritten
            core.session.save()

        async def plain_save() -> None:
            data = {"history": [m.to_dict() for m in core.session.history]}
            path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")

        save_times = await alternate({"ours": save, "plain": plain_save}, samples)
    finally:
        await core.aclose()

    memory_samples = settings.repeats(3, 3)
    memory = median([_traced_bytes_per_message(count) for _ in range(memory_samples)])
    json_bytes = sum(len(json.dumps(m.to_dict(), ensure_ascii=False)) for m in long_history)
    return [
        Figure(
            what="turns: AgentCore.submit, offline text reply",
            unit="/s",
            ours=1 / per_turn,
            baseline=1 / bare_turn,
            baseline_what="the same backend's stream drained alone",
            samples=batches,
            paired=paired_ratio(times["ours"], times["bare"]),
            note=f"{(per_turn - bare_turn) * 1e6:.0f} µs of loop per turn ({turns} turns a sample)",
        ),
        Figure(
            what=f"{count:,}-message session: memory/message",
            unit="B",
            ours=memory,
            baseline=json_bytes / len(long_history),
            baseline_what="the message as session JSON",
            samples=memory_samples,
            note=f"{memory * len(long_history) / 2**20:.1f} MiB in all (tracemalloc)",
        ),
        Figure(
            what=f"one turn, {count:,}-message history",
            unit="ms",
            ours=median(turn_times["long"]) * 1000,
            baseline=median(turn_times["short"]) * 1000,
            baseline_what="one turn with an empty history",
            samples=samples,
            paired=paired_ratio(turn_times["long"], turn_times["short"]),
        ),
        Figure(
            what=f"session save, whole file, {count:,} messages",
            unit="ms",
            ours=median(save_times["ours"]) * 1000,
            baseline=median(save_times["plain"]) * 1000,
            baseline_what="json.dumps of the messages' dicts + write",
            samples=samples,
            paired=paired_ratio(save_times["ours"], save_times["plain"]),
        ),
    ]


ROW = Row("turns", "Turn loop and session memory", run)
