"""What a `%ollie COMMAND` handler needs from the magics, declared where commands consume it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore
    from ollie_nb.notebook._render import Settings
    from ollie_nb.notebook._runtime import NotebookRuntime
    from ollie_nb.planning import QueuedPrompt

T = TypeVar("T")


class CommandContext(Protocol):
    """The magics as the commands see them (OllieMagics provides it)."""

    shell: Any  # the InteractiveShell: the user's namespace
    watch_interval: float

    def runtime(self) -> NotebookRuntime:
        """The kernel's runtime (started on first use)."""
        ...

    def core_call(self, fn: Callable[[AgentCore], Awaitable[T]]) -> T:
        """Run `await fn(core)` on the runtime loop; usage-like errors become a UsageError."""
        ...

    def on_loop(self, fn: Callable[[AgentCore], T]) -> T:
        """Run the plain `fn(core)` on the runtime loop, where the core lives."""
        ...

    def user_value(self, name: str, command: str) -> Any:
        """A variable of the notebook, or a UsageError naming it."""
        ...

    def settings(self) -> Settings:
        """The display traits a renderer reads (read when a view starts)."""
        ...

    def prompt(self, prog: str, line: str, cell: str | None = None) -> Any:
        """Run a prompt line (options, then prose) as a turn, or queue it."""
        ...

    def foreground(self, runtime: NotebookRuntime, text: str | QueuedPrompt) -> None:
        """Run `text` as a turn streamed into the cell."""
        ...

    def help_text(self) -> str: ...
