"""`%ollie` commands that show what the agent runs with: tools, system prompt, cost, last error."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from ollie_nb.notebook._context import CommandContext
from ollie_nb.notebook._display import Displayable, NoticeView, Table, TextBlock
from ollie_nb.notebook._failures import last_failure
from ollie_nb.notebook.commands._args import words_of
from ollie_nb.notebook.commands._registry import COMMANDS

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore

command = COMMANDS.command


@command("tools", "every tool the model is offered, with its server and first sentence")
def cmd_tools(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "tools", most=0, usage="tools")

    def rows(core: AgentCore) -> list[tuple[str, str, str]]:
        listing = core.router.by_server()
        found = [(name, server, line) for server, tools in listing.items() for name, line in tools]
        for server in core.list_servers().servers:  # listed by a server, not offered: why
            found += [(n, server.name, f"not offered: {why}") for n, why in server.withheld]
        return found

    return Table("tools", ["tool", "server", "what it does"], ctx.on_loop(rows), empty="(no tools)")


@command("system", "the assembled system prompt the model gets")
def cmd_system(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "system", most=0, usage="system")
    return TextBlock(ctx.on_loop(lambda core: core.system_prompt()), title="system prompt:")


@command("cost", "the money this session has cost: the provider's figure, else the price table's")
def cmd_cost(ctx: CommandContext, rest: str) -> Displayable:
    from ollie_nb.llm import PriceSource, price_source  # the price table: on first use

    words_of(rest, "cost", most=0, usage="cost")
    usage, name, model = ctx.on_loop(
        lambda core: (copy.copy(core.session.usage), core.backend.name, core.backend.model)
    )
    cache = ""
    if usage.cache_read_tokens or usage.cache_write_tokens:
        cache = (
            f"; prompt cache: {usage.cache_read_tokens} tokens read, "
            f"{usage.cache_write_tokens} written"
        )
    if price_source(name, model) is PriceSource.LOCAL:
        return NoticeView(
            f"$0.0000 this session: {model} is a local model ({name}), it costs nothing"
        )
    if usage.cost is None and usage.unpriced:
        return NoticeView(
            f"no price known for {model} on {name}; %ollie usage shows the tokens{cache}"
        )
    return NoticeView(
        f"{usage.cost_text} this session ({model} on {name}: the provider's own cost where it "
        f"reports one, else the genai-prices table's){cache}"
    )


@command("debug", "the traceback of the last internal error")
def cmd_debug(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "debug", most=0, usage="debug")
    failure = last_failure()
    # redacted (the core's known secrets and key formats): a provider error can quote the
    # header that carried the key
    kept = failure.traceback if failure is not None else None
    text = ctx.on_loop(
        lambda core: _redacted(core, core.turns.runner.last_error if kept is None else kept)
    )
    if failure is not None and failure.users:
        return TextBlock(text, title="the last error, raised by your code:")
    if failure is not None and failure.source:
        return TextBlock(text, title=f"the last error, from {failure.source}:")
    if not text:
        return NoticeView("no internal error in this kernel so far")
    return TextBlock(text, title="the last internal error:")


def _redacted(core: AgentCore, text: str) -> str:
    return core.redact(text) if text else ""
