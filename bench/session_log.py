"""Sessions saved by appending: a turn's save at 100 and 10,000 messages, and a resume.

Two agents (offline backend, not started: a save needs no servers) hold sessions of 100
and 10,000 messages, built as bench/turn_loop.py builds a long history and saved once.
Then turns alternate between them: each adds a prompt and a reply and saves, timed alone.
The floor of a turn's save is appending the same two messages as JSON to a file. The
resume is `AgentCore.resume` of the 10,000-message session beside its floor, reading the
file and decoding each of its lines.
"""

from __future__ import annotations

import gc
import json
import os
import time
from pathlib import Path

from bench._report import Figure
from bench._run import Row, Settings, median, paired_ratio
from bench.turn_loop import session_messages
from ollie_nb.core import AgentCore
from ollie_nb.llm import Message, OfflineBackend

SMALL, LARGE = 100, 10_000
GOAL_RATIO = 1.2  # a turn's save at 10,000 messages, over one at 100
RESUME_GOAL_S = 0.5


def _agent(scratch: Path, messages: int) -> AgentCore:
    core = AgentCore(OfflineBackend(), workdir=scratch, autosave=False, execute=False)
    core.session.history = session_messages(messages)
    if core.session.save() is None:
        raise RuntimeError("the session was not saved")
    return core


def _turn_save(core: AgentCore, turn: int) -> float:
    """Add one turn's prompt and reply, then time the save."""
    core.session.history += [Message.user(f"prompt {turn}"), Message.assistant(f"reply {turn}")]
    began = time.perf_counter()
    core.session.save()
    return time.perf_counter() - began


def _bare_append(path: Path, turn: int) -> float:
    """The floor: the same two messages as one JSON line, appended to a file."""
    pair = [Message.user(f"prompt {turn}"), Message.assistant(f"reply {turn}")]
    began = time.perf_counter()
    line = json.dumps([m.to_dict() for m in pair], ensure_ascii=False) + "\n"
    with path.open("a", encoding="utf-8") as file:
        file.write(line)
    return time.perf_counter() - began


def _rewrite(core: AgentCore) -> float:
    """A whole rewrite (a compaction's, or a log past twice its snapshot): its cost."""
    core.session.history = list(core.session.history)  # a new list: rewritten whole
    began = time.perf_counter()
    core.session.save()
    return time.perf_counter() - began


def _decode_floor(path: Path) -> float:
    gc.collect()
    began = time.perf_counter()
    for line in path.read_bytes().splitlines():
        json.loads(line)
    return time.perf_counter() - began


async def run(settings: Settings) -> list[Figure]:
    """Per-turn saves of a small and a large session side by side; then a resume."""
    turns = settings.repeats(200, 40)
    small = _agent(settings.scratch, settings.size(SMALL, 8))
    large = _agent(settings.scratch, settings.size(LARGE, 40))
    bare = settings.scratch / "bare-append.jsonl"
    times: dict[str, list[float]] = {"small": [], "large": [], "bare": []}
    for turn in range(turns):
        order = ("large", "small") if turn % 2 else ("small", "large")
        for name in order:
            times[name].append(_turn_save(large if name == "large" else small, turn))
        times["bare"].append(_bare_append(bare, turn))
    rewrite = _rewrite(large) * 1000
    path = large.session.save()
    assert path is not None
    size = os.path.getsize(path)

    resumes: dict[str, list[float]] = {"ours": [], "floor": []}
    for sample in range(settings.repeats(7, 3)):
        if sample % 2:
            resumes["floor"].append(_decode_floor(path))
        async with AgentCore(OfflineBackend(), workdir=settings.scratch, autosave=False) as core:
            gc.collect()
            began = time.perf_counter()
            await core.session.resume(large.session.session_id)
            resumes["ours"].append(time.perf_counter() - began)
        if not sample % 2:
            resumes["floor"].append(_decode_floor(path))
    resume = median(resumes["ours"])
    count, few = settings.size(LARGE, 40), settings.size(SMALL, 8)
    return [
        Figure(
            what=f"per-turn save, {count:,} vs {few:,} messages",
            unit="ms",
            ours=median(times["large"]) * 1000,
            baseline=median(times["small"]) * 1000,
            baseline_what="the same turn's save in the small session",
            max_ratio=GOAL_RATIO,
            samples=turns,
            paired=paired_ratio(times["large"], times["small"]),
            note=(
                f"+2 messages a turn; a whole rewrite (compaction, or a log past twice its "
                f"snapshot) of {len(large.session.history):,} messages: {rewrite:.0f} ms"
            ),
        ),
        Figure(
            what=f"per-turn save, {count:,} messages, vs a bare append",
            unit="ms",
            ours=median(times["large"]) * 1000,
            baseline=median(times["bare"]) * 1000,
            baseline_what="the turn's two messages as one JSON line, appended to a file",
            samples=turns,
            paired=paired_ratio(times["large"], times["bare"]),
        ),
        Figure(
            what=f"resume, {count:,}-message session: AgentCore.resume",
            unit="s",
            ours=resume,
            baseline=median(resumes["floor"]),
            baseline_what="reading the file and json.loads of each line",
            goal=f"< {RESUME_GOAL_S:g} s",
            met=resume < RESUME_GOAL_S,
            samples=len(resumes["ours"]),
            paired=paired_ratio(resumes["ours"], resumes["floor"]),
            note=f"{size / 2**20:.1f} MiB of log",
        ),
    ]


ROW = Row("session-log", "Sessions saved by appending: a turn's save and a resume", run)
