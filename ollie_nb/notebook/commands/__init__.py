"""The `%ollie COMMAND` handlers, by topic, in the one registry (`COMMANDS`).

Each handler takes a CommandContext (what it needs of the magics) and the rest of
the line, and returns a displayable; dispatch, help, completion and "did you mean"
come from the registry. The help lists the commands in the order imported here.
"""

from ollie_nb.notebook.commands import (  # noqa: F401
    agent,
    board,
    inbox,
    inspect,
    plans,
    python,
    session,
)
from ollie_nb.notebook.commands._registry import COMMANDS, Command, Registry

__all__ = ["COMMANDS", "Command", "Registry"]
