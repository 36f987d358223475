"""AgentCore's prompt queue: queue, pop, inject, and notes for the next turn."""

from __future__ import annotations

import logging

log = logging.getLogger("ollie_nb.core")


class QueueMethods:
    """The FIFO of prompts and what waits for the next turn (a part of AgentCore)."""

    def queue(self, prompt: str) -> int:
        """Append a prompt to the FIFO; it runs as its own turn after the current one."""
        self._queue.append(prompt)
        return len(self._queue)

    def pop_queue(self) -> str | None:
        """Take the next queued prompt (None when empty)."""
        return self.watch.take(self._queue.popleft()) if self._queue else None

    def note(self, text: str) -> None:
        """A short note the agent reads at the start of its next turn."""
        self._notes.append(text)

    def _with_notes(self, prompt: str) -> str:
        notes, self._notes = self._notes, []
        if not notes:
            return prompt
        return prompt + "\n\n[task events since your last turn]\n" + "\n".join(notes)

    @property
    def queued(self) -> list[str]:
        return list(self._queue)

    def clear_queue(self) -> int:
        count = len(self._queue)
        self._queue.clear()
        return count

    def inject(self, prompt: str) -> None:
        """Tell the running turn something: appended to the next tool result, else the next prompt."""
        if self.is_running:
            self._injected.append(prompt)
        else:
            self._queue.appendleft(prompt)

    def take_injected(self) -> list[str]:
        """The injected texts waiting for the running turn (and forget them)."""
        taken, self._injected = self._injected, []
        return taken
