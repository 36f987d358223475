"""How the commands read the rest of their line: words, options (IPython's MagicArgumentParser), completions."""

from __future__ import annotations

import argparse
import inspect
import os
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicArgumentParser

BACKENDS = ("offline", "openai", "openrouter", "anthropic", "ollama")
TASK_STATUSES = ("open", "ready", "all", "in_progress", "done", "failed")


def words_of(rest: str, prog: str, *, most: int, usage: str) -> list[str]:
    """The words of an argument line, at most `most` of them (else a UsageError)."""
    words = rest.split()
    if len(words) > most:
        raise UsageError(f"%ollie {prog}: too many words {rest!r}; usage: %ollie {usage}")
    return words


def seconds(text: str) -> float:
    """An option's seconds: a number more than 0 (argparse shows the reason in one line)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} s; give more than 0 seconds")
    return value


def at_least_one(text: str) -> int:
    """An option's count: a whole number, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}; give 1 or more")
    return value


class CommandParser(MagicArgumentParser):
    """A command's options; a mistake is one red line that names the command."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog=prog, add_help=False)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"%ollie {self.prog}: {message}")

    def parse(self, rest: str) -> argparse.Namespace:
        """The options of `rest` (quotes group words; `--` ends the options)."""
        try:
            return self.parse_argstring(rest)
        except ValueError as exc:  # an unclosed quote
            raise UsageError(f"%ollie {self.prog}: {exc}") from None


def user_vars(kind: str) -> Callable[[Any], list[str]]:
    """Completions: the notebook's variables that have the attribute `kind`."""

    def complete(shell: Any) -> list[str]:
        found = []
        for name, value in shell.user_ns.items():
            if name.startswith("_") or isinstance(value, type):
                continue
            if hasattr(value, kind) or (kind == "create_plan" and inspect.isfunction(value)):
                found.append(name)
        return found

    return complete


def agent_names(shell: Any) -> list[str]:
    from ollie_nb.core import list_agents  # on first completion, not at %load_ext

    return list_agents(os.getcwd())


def session_ids(shell: Any) -> list[str]:
    from ollie_nb.core import list_sessions  # on first completion, not at %load_ext

    return [s.id for s in list_sessions()[:20]]
