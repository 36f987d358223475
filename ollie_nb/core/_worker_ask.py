"""`ollie-work --ask`: a call that needs approval is parked in the task store's inbox.

The step stays claimed (its lease is kept as for any call that takes long) while the worker
waits for an answer, up to a timeout; unanswered, or answered by someone it does not take
answers from, the call is denied, as without `--ask`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ollie_nb.core._inbox_ask import ANSWER_MARGIN, request_what
from ollie_nb.core._routing import ScopedApprover, StepScope
from ollie_nb.errors import OllieError
from ollie_nb.planning import TaskClient


class InboxApprover(ScopedApprover):
    """Asks the inbox of `client` about each call, as `asker`, and waits for the answer."""

    def __init__(
        self,
        client: TaskClient,
        asker: str,
        timeout: float,
        answers_from: tuple[str, ...],
        log: Callable[[str], None],
    ) -> None:
        self.client, self.asker, self.timeout = client, asker, timeout
        self.answers_from, self._log = answers_from, log

    async def ask(self, name: str, args: dict[str, Any], scope: StepScope | None) -> bool:
        """Park the call as an inbox request and wait; True only for an accepted allow."""
        what = request_what(name, args)
        goal, step = (scope.goal, scope.task) if scope is not None else ("", "")
        try:
            request = await self.client.ask(
                "approval", what, self.asker, goal=goal, step=step, timeout=self.timeout
            )
            self._log(f"asked: {request} {what} (waits {self.timeout:g} s for an answer)")
            row = await self.client.wait_answer(request, self.timeout + ANSWER_MARGIN)
        except (OllieError, ValueError) as exc:  # ValueError: an unreadable inbox page
            self._log(f"refused: {name}: the inbox could not be asked ({exc})")
            return False
        if row is None or row.open or row.state == "expired":
            self._log(f"refused: {request} was not answered in time: denied")
            return False
        if self.answers_from and row.answered_by not in self.answers_from:
            who = row.answered_by or "someone unnamed"
            self._log(
                f"refused: {request} was answered by {who}, not by "
                f"{', '.join(self.answers_from)}: denied"
            )
            return False
        self._log(f"answered: {request} {row.answer} by {row.answered_by or 'someone unnamed'}")
        return row.allowed
