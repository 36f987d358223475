"""PromptQueue: what waits for the agent: queued items, text injected into a turn, notes.

Three small queues of one agent: the FIFO of `QueuedPrompt`s (each worked as its own
turn; a plan step's item knows its step), the texts injected into the running turn
(appended to its next tool result), and the notes told at the start of the next turn.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ollie_nb.planning import Origin, QueuedPrompt
from ollie_nb.planning.prompts import NOTES_HEADER


class PromptQueue:
    """The agent's queued items, injected texts and notes (see the module docstring)."""

    def __init__(self) -> None:
        self._items: deque[QueuedPrompt] = deque()
        self._injected: list[str] = []
        self._notes: list[str] = []

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    # -- items -------------------------------------------------------------------

    @property
    def items(self) -> list[QueuedPrompt]:
        return list(self._items)

    def put(self, item: QueuedPrompt) -> int:
        """Append an item; its position (1-based) in the queue."""
        self._items.append(item)
        return len(self._items)

    def put_first(self, item: QueuedPrompt) -> None:
        """An item worked before every other."""
        self._items.appendleft(item)

    def put_before_plan(self, item: QueuedPrompt, plan: int) -> None:
        """An item worked just before the first queued step of plan `plan` (else last)."""
        for index, queued in enumerate(self._items):
            if queued.step is not None and queued.step.plan == plan:
                self._items.insert(index, item)
                return
        self._items.append(item)

    def remove(self, item: QueuedPrompt) -> bool:
        """Take this very item off the queue; False when it is not queued (worked already)."""
        for queued in self._items:
            if queued is item:
                self._items.remove(queued)
                return True
        return False

    def pop(self) -> QueuedPrompt | None:
        """The next item (None when empty)."""
        return self._items.popleft() if self._items else None

    def clear(self) -> int:
        count = len(self._items)
        self._items.clear()
        return count

    def drop(self, keep: Callable[[QueuedPrompt], bool]) -> int:
        """Drop every item `keep` refuses; how many went."""
        kept = [item for item in self._items if keep(item)]
        dropped = len(self._items) - len(kept)
        self._items = deque(kept)
        return dropped

    def withdraw(self, origin: Origin, text: str) -> None:
        """Take back the first item of `origin` with this text (a note read another way)."""
        for item in self._items:
            if item.origin is origin and item.text == text:
                self._items.remove(item)
                return

    def has_step(self, step_id: str) -> bool:
        """Whether an item for this step waits in the queue."""
        return any(item.step is not None and item.step.step_id == step_id for item in self._items)

    # -- injected texts and notes --------------------------------------------------

    def inject(self, text: str) -> None:
        """Text for the running turn: appended to its next tool result."""
        self._injected.append(text)

    def take_injected(self) -> list[str]:
        """The injected texts waiting for the running turn (and forget them)."""
        taken, self._injected = self._injected, []
        return taken

    def note(self, text: str) -> None:
        """A short note the agent reads at the start of its next turn."""
        self._notes.append(text)

    def with_notes(self, prompt: str) -> str:
        """The prompt with the waiting notes appended (and forget them)."""
        notes, self._notes = self._notes, []
        return prompt + NOTES_HEADER + "\n".join(notes) if notes else prompt
