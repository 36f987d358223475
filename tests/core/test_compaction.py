"""Long sessions compact themselves: at 75% of the window, keeping the user's latest words."""

from __future__ import annotations

import json
import stat

import pytest

from ollie_nb.core import AgentConfig, Notice
from ollie_nb.core._compact import COMPACT_PROMPT, KEPT_HEAD, SUMMARY_HEAD
from ollie_nb.llm import LLMError, OfflineBackend


def _model(requests: list):
    def reply(messages, tools):
        requests.append(messages)
        if messages[-1].content.startswith(COMPACT_PROMPT):
            return "SUMMARY: the user asked for five long answers"
        return f"answer {len(requests)}: " + "words " * 150

    return reply


@pytest.mark.anyio
async def test_a_session_past_75_percent_compacts_itself_and_goes_on(make_core):
    requests: list = []
    backend = OfflineBackend(_model(requests), context_length=2400)
    core = await make_core(backend, execute=False, autosave=True)
    prompts = [f"prompt {i}: please keep {i} in mind " + "detail " * 150 for i in range(6)]
    events: list = []
    for prompt in prompts:
        result = await core.submit(prompt, events.append)
        assert not result.error
    infos = [e.text for e in events if isinstance(e, Notice)]
    starts = [i for i, text in enumerate(infos) if "compacting first" in text]
    assert starts, infos
    assert (
        infos[starts[0]].startswith("context at ")
        and "of 2400 tokens (over 75%)" in infos[starts[0]]
    )
    assert infos[starts[0] + 1].startswith("compacted ")
    # the history now begins with the summary and the user's latest messages, verbatim
    first = core.session.history[0].content
    assert first.startswith(f"{SUMMARY_HEAD}\nSUMMARY: the user asked for five long answers")
    kept = first.split(f"{KEPT_HEAD}\n\n", 1)[1].split("\n\n---\n\n")
    start = prompts.index(kept[0])  # the latest user messages, in order, verbatim
    assert kept == prompts[start : start + len(kept)] and start > 0
    assert sum(len(t) // 4 + 1 for t in kept) <= 600  # a quarter of the 2400-token window
    # the last turn worked after the compaction: its prompt and reply are in the history
    assert core.session.history[-2].content == prompts[-1]
    assert core.session.history[-1].content.startswith("answer ")
    # the archive holds what was compacted away, one JSON line per message, private
    archive = core.session.archive_path
    lines = [json.loads(line) for line in archive.read_text().splitlines()]
    assert [m["content"] for m in lines if m["role"] == "user"][:2] == prompts[:2]
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert archive.parent == core.session.save().parent


@pytest.mark.anyio
async def test_no_compaction_while_the_context_is_small(make_core):
    backend = OfflineBackend(turns=["short", "short"], context_length=100_000)
    core = await make_core(backend, autosave=True)
    events: list = []
    await core.submit("a", events.append)
    await core.submit("b", events.append)
    notices = [e for e in events if isinstance(e, Notice)]
    assert not [e for e in notices if "compact" in e.text]
    assert not core.session.archive_path.exists()


def _hook_script(tmp_path):
    log = tmp_path / "hooks.log"
    script = tmp_path / "hook.sh"
    script.write_text(
        '#!/bin/sh\nevent="$1"\npayload=$(cat)\n'
        f'printf "%s %s\\n" "$event" "$payload" >> "{log}"\n'
        'if [ "$event" = preCompact ]; then echo "keep the numbers"; fi\n'
        'if [ "$event" = postCompact ]; then echo "compaction note"; fi\n'
    )
    script.chmod(0o755)
    return script, log


@pytest.mark.anyio
async def test_compact_and_turn_error_hooks_run_with_their_payloads(make_core, tmp_path):
    script, log = _hook_script(tmp_path)
    hooks = {event: f"{script} {event}" for event in ("preCompact", "postCompact", "turnError")}
    config = AgentConfig.from_dict({"hooks": hooks})
    seen = []

    def model(messages, tools):
        seen.append(messages[-1].content)
        if messages[-1].content == "fail now":
            raise LLMError("the provider is down")
        return "SUMMARY" if messages[-1].content.startswith(COMPACT_PROMPT) else "fine"

    core = await make_core(OfflineBackend(model), agent=config, execute=False, autosave=True)
    await core.submit("hello")
    done = await core.session.compact()
    failed = await core.submit("fail now")
    events = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert [e for e, _ in events] == ["preCompact", "postCompact", "turnError"]
    assert json.loads(events[0][1])["messages"] == 2
    assert json.loads(events[1][1])["summary"] == "SUMMARY"
    assert "the provider is down" in json.loads(events[2][1])["error"]
    assert (
        seen[1] == f"{COMPACT_PROMPT}\n\nkeep the numbers"
    )  # preCompact output reaches the summary request
    assert [m.content for m in core.session.history[2:4]] == ["compaction note", "Noted."]
    assert done.summary == "SUMMARY" and failed.error


@pytest.mark.anyio
async def test_a_second_compaction_keeps_one_summary_and_never_quotes_the_first_as_the_users(
    make_core,
):
    summaries = iter(["FIRST SUMMARY of early work", "SECOND SUMMARY of all work"])

    def reply(messages, tools):
        if messages[-1].content.startswith(COMPACT_PROMPT):
            return next(summaries)
        return "ok"

    core = await make_core(OfflineBackend(reply), execute=False, autosave=True)
    await core.submit("first request")
    await core.session.compact()
    await core.submit("second request")
    await core.session.compact()
    first = core.session.history[0].content
    assert first.startswith(f"{SUMMARY_HEAD}\nSECOND SUMMARY of all work")
    assert first.count(SUMMARY_HEAD) == 1 and "FIRST SUMMARY" not in first
    kept = first.split(f"{KEPT_HEAD}\n\n", 1)[1].split("\n\n---\n\n")
    assert kept == ["second request"]  # the user's own message since, not the old summary
