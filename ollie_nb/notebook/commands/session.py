"""`%ollie` commands about the conversation and its session file."""

from __future__ import annotations

import copy
import os
import time
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ollie_nb.errors import OllieUsageError
from ollie_nb.notebook._context import CommandContext
from ollie_nb.notebook._display import Displayable, Group, NoticeView, Table, TextBlock, plural
from ollie_nb.notebook.commands._args import session_ids, words_of
from ollie_nb.notebook.commands._registry import COMMANDS

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore

command = COMMANDS.command


@command(
    "compact",
    "replace the history with the model's summary and your latest messages (archived first)",
)
def cmd_compact(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "compact", most=0, usage="compact")
    done = ctx.core_call(lambda core: core.session.compact())
    if done.history is None:
        return NoticeView(done.note, "warning" if done.note != "nothing to compact" else "info")
    return TextBlock(done.summary, title=f"{done.note}; summary:")


@command("context", "tokens the next request sends, against the model's window")
def cmd_context(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "context", most=0, usage="context")

    async def measure(core: AgentCore) -> tuple[int, int | None, int]:
        size = core.session.context_size(core.system_prompt())
        return size, await core.backend.context_length(), len(core.session.history)

    size, limit, messages = ctx.core_call(measure)
    share = f" of {limit} ({100 * size / limit:.0f}%)" if limit else ""
    return NoticeView(f"context: about {size} tokens{share}; {plural(messages, 'message')}")


class UsageView(NoticeView):
    """`r = %ollie usage`: the session's usage as fields, shown as one line."""

    def __init__(self, usage: Any, local: bool = False) -> None:
        cost = f", {usage.cost_text}" if usage.requests else ""
        super().__init__(f"usage: {usage}{cost}" + (" (a local model: no cost)" if local else ""))
        self.requests = usage.requests
        self.input_tokens = usage.input_tokens
        self.output_tokens = usage.output_tokens
        self.cache_read_tokens = usage.cache_read_tokens
        self.cache_write_tokens = usage.cache_write_tokens
        self.cost = usage.cost


@command(
    "usage", "requests, tokens (prompt cache too) and cost of this session (fields: requests, ...)"
)
def cmd_usage(ctx: CommandContext, rest: str) -> Displayable:
    from ollie_nb.llm import PriceSource, price_source  # the price table: on first use

    words_of(rest, "usage", most=0, usage="usage")
    usage, name, model = ctx.on_loop(
        lambda core: (copy.copy(core.session.usage), core.backend.name, core.backend.model)
    )
    return UsageView(usage, local=price_source(name, model) is PriceSource.LOCAL)


@command("history [N]", "the last N messages, one line each")
def cmd_history(ctx: CommandContext, rest: str) -> Displayable:
    if rest and not rest.isdigit():
        raise UsageError(f"%ollie history: give a number of messages, not {rest!r}")
    history = ctx.on_loop(lambda core: list(core.session.history))
    count = int(rest) if rest else len(history)
    lines = []
    for message in history[-count:] if count else []:
        body = message.content
        if message.tool_calls:
            body += " " + " ".join(f"[{c.name} {c.arguments[:80]}]" for c in message.tool_calls)
        lines.append(f"{message.role:>9}: {' '.join(body.split())[:200]}")
    return TextBlock(
        "\n".join(lines) or "(empty)", title=f"history ({plural(len(history), 'message')})"
    )


@command("clear", "forget the conversation; a new session starts")
def cmd_clear(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "clear", most=0, usage="clear")
    if ctx.runtime().busy:
        raise UsageError("%ollie clear: a turn is running; %ollie stop first")
    ctx.on_loop(lambda core: core.session.clear())
    return NoticeView("conversation cleared; a new session starts")


@command("sessions", "saved sessions")
def cmd_sessions(ctx: CommandContext, rest: str) -> Displayable:
    from ollie_nb.core import list_sessions  # the core: on first use

    words_of(rest, "sessions", most=0, usage="sessions")
    rows = [
        (
            s.id,
            s.name,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated)),
            s.messages,
            s.first_prompt,
        )
        for s in list_sessions()[:50]
    ]
    return Table("sessions", ["id", "name", "updated", "messages", "first prompt"], rows)


@command("resume ID|NAME", "load a saved session's messages and plans", completer=session_ids)
def cmd_resume(ctx: CommandContext, rest: str) -> Displayable:
    if not rest:
        raise UsageError("%ollie resume: give a session id or name (see %ollie sessions)")

    async def resume(core: AgentCore) -> tuple[str, int, int, str]:
        try:
            note = await core.session.resume(rest)
        except OllieUsageError as exc:  # no such session, a corrupt file, a turn running
            raise UsageError(f"%ollie resume: {exc}") from None
        return core.session.session_id, len(core.session.history), len(core.plans), note

    session, messages, plans, note = ctx.core_call(resume)
    done = NoticeView(f"resumed {session}: {plural(messages, 'message')}, {plural(plans, 'plan')}")
    return (
        Group(done, NoticeView(note, "info" if note.startswith("agent:") else "warning"))
        if note
        else done
    )


@command("rename NAME", "name the session (and save it)")
def cmd_rename(ctx: CommandContext, rest: str) -> Displayable:
    if not rest:
        raise UsageError("%ollie rename: give a name")
    name = rest.strip()
    path = ctx.on_loop(lambda core: core.session.rename(name))
    if path is None:
        return NoticeView(f"session named {name!r}; it is saved with the first prompt")
    return NoticeView(f"session named {name!r} and saved")


@command("save", "save the session now (it is also saved after every turn)")
def cmd_save(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "save", most=0, usage="save")
    path = ctx.on_loop(lambda core: core.session.save())
    return NoticeView(f"saved to {path}" if path else "nothing to save yet")


@command("cwd [DIR]", "show or change the work dir (execute_code, hooks)")
def cmd_cwd(ctx: CommandContext, rest: str) -> Displayable:
    def change(core: AgentCore) -> str:
        if rest:
            try:
                core.set_workdir(os.path.expandvars(rest))
            except OSError as exc:
                raise UsageError(f"%ollie cwd: {exc}") from None
        return core.workdir

    return NoticeView(f"work dir: {ctx.on_loop(change)}")
