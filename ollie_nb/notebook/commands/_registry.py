"""One registry of `%ollie` commands: dispatch, help, tab completion and "did you mean" all come from it."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from ollie_nb.notebook._context import CommandContext

Handler = Callable[
    ["CommandContext", str], Any
]  # (the magics, the rest of the line) -> a displayable
Completer = Callable[[Any], Iterable[str]]  # the shell -> extra completions


@dataclass(frozen=True)
class Command:
    """One `%ollie` command: how it is written, what it does, what completes after it."""

    name: str
    usage: str
    summary: str
    handler: Handler
    words: tuple[str, ...] = ()
    completer: Completer | None = None


class Registry:
    """The commands, in the order the help lists them."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}

    def command(
        self,
        usage: str,
        summary: str,
        *,
        words: Iterable[str] = (),
        completer: Completer | None = None,
    ) -> Callable[[Handler], Handler]:
        """Register the decorated function as the command named by the first word of `usage`."""

        def register(handler: Handler) -> Handler:
            name = usage.split()[0]
            self._commands[name] = Command(name, usage, summary, handler, tuple(words), completer)
            return handler

        return register

    @property
    def names(self) -> list[str]:
        return list(self._commands)

    def get(self, name: str) -> Command:
        """The command, or a UsageError that suggests the closest name."""
        found = self._commands.get(name)
        if found is not None:
            return found
        close = difflib.get_close_matches(name, self.names, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "; see %ollie help"
        raise UsageError(f"%ollie: unknown command '{name}'{hint}")

    def help_lines(self) -> list[str]:
        width = max(len(c.usage) for c in self._commands.values()) + 2
        return [f"  {c.usage.ljust(width)}{c.summary}" for c in self._commands.values()]

    def completions(self, shell: Any, line: str) -> list[str]:
        """Completions for the line typed after `%ollie` so far."""
        words = line.split()
        if len(words) < 2 or (len(words) == 2 and not line.endswith(" ")):
            return self.names
        command = self._commands.get(words[1])
        if command is None:
            return []
        extra = list(command.completer(shell)) if command.completer else []
        return [*command.words, *extra]


COMMANDS = Registry()
