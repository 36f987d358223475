"""`%ollie` commands that show what the agent runs with: tools, system prompt, cost, last error."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from ollie_nb.notebook._commands import command, words_of
from ollie_nb.notebook._display import Displayable, Notice, Table, TextBlock
from ollie_nb.tools import hide_secrets

_last_error: list[str] = []  # the traceback of the last internal error the notebook saw


def record_error(exc: BaseException, redact: Callable[[str], str] = str) -> Notice:
    """Keep an internal error's traceback for `%ollie debug`; the notice to show for it.

    Both are redacted (`redact`: the core's known secrets, then key formats): a provider
    error quotes the header that carried the key."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    _last_error[:] = [hide_secrets(redact(text))]
    first = hide_secrets(redact(str(exc))).strip().splitlines()
    detail = f": {first[0]}" if first else ""
    return Notice(
        f"internal error {type(exc).__name__}{detail} (a bug, not your input: "
        "%ollie debug shows the traceback)",
        "error",
    )


@command("tools", "every tool the model is offered, with its server and first sentence")
def cmd_tools(m: Any, rest: str) -> Displayable:
    words_of(rest, "tools", most=0, usage="tools")

    def rows(core: Any) -> list[tuple[str, str, str]]:
        listing = core.router.by_server()
        return [(name, server, line) for server, tools in listing.items() for name, line in tools]

    return Table("tools", ["tool", "server", "what it does"], m.on_loop(rows), empty="(no tools)")


@command("system", "the assembled system prompt the model gets")
def cmd_system(m: Any, rest: str) -> Displayable:
    words_of(rest, "system", most=0, usage="system")
    return TextBlock(m.on_loop(lambda core: core.system_prompt()), title="system prompt:")


@command("cost", "the money this session has cost, where the backend reports it")
def cmd_cost(m: Any, rest: str) -> Displayable:
    words_of(rest, "cost", most=0, usage="cost")
    cost, name = m.on_loop(lambda core: (core.usage.cost, core.backend.name))
    if cost is None:
        return Notice(f"the {name} backend does not report cost; %ollie usage shows the tokens")
    return Notice(f"${cost:.4f} this session (as reported by {name})")


@command("debug", "the traceback of the last internal error")
def cmd_debug(m: Any, rest: str) -> Displayable:
    words_of(rest, "debug", most=0, usage="debug")
    core_error = m.on_loop(lambda core: hide_secrets(core.redact(core.last_error)))
    text = _last_error[0] if _last_error else core_error
    if not text:
        return Notice("no internal error in this kernel so far")
    return TextBlock(text, title="the last internal error:")
