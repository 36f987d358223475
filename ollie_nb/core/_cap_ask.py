"""Caps that pause and ask: a request that meets a reached cap asks the task store's inbox.

The model gateway (core/_model_gateway.py) calls `CapAsk.settle` when a request is refused
at a cap. With asking on (`ollie-work --ask`, `OllieMagics.ask_at_caps`, `%ollie run
--ask`) and a task store that keeps an inbox, the work pauses on one request of kind `cap`
per reached cap (requests that meet the same cap meanwhile wait for the same answer):
`raise:N` raises the cap by N (dollars or tokens, as the cap is) and the requests go on;
stop, deny, a timeout or no answer refuse them as without asking, and that cap is not asked
about again until it changes. Without anyone to ask, nothing waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ollie_nb.core._budget import BudgetExceededError, CapKind, Ledger, Scope, dollars
from ollie_nb.errors import OllieError
from ollie_nb.planning import InboxRequest, StepRef, TaskClient

log = logging.getLogger("ollie_nb.core")
DEFAULT_ASK_TIMEOUT = 300.0  # s a reached cap waits for an answer
ANSWER_MARGIN = 2.0  # s past the request's deadline before the asker stops looking


@dataclass(frozen=True)
class CapAnswer:
    """What an answer to a cap request says: raise the cap by `amount`, or not (stop)."""

    amount: float = 0.0
    why: str = ""  # for a stop: what the answer was

    @classmethod
    def of(cls, row: InboxRequest | None, answers_from: tuple[str, ...]) -> CapAnswer:
        """The answer of an inbox row as the asker takes it (only `raise:N` with N > 0 of
        someone it takes answers from raises)."""
        if row is None or row.open or row.state == "expired":
            return cls(why="not answered in time")
        if answers_from and row.answered_by not in answers_from:
            return cls(why=f"answered by {row.answered_by or 'someone unnamed'}, not taken")
        amount = (
            _amount(row.answer.removeprefix("raise:")) if row.answer.startswith("raise:") else 0
        )
        return cls(amount, "" if amount > 0 else f"answered {row.answer or 'nothing'}")


def _amount(text: str) -> float:
    try:
        return max(float(text), 0.0)
    except ValueError:
        return 0.0


class CapAsk:
    """Whether and whom a reached cap asks; one request per reached cap at a time."""

    def __init__(self, client: Callable[[], TaskClient | None], asker: Callable[[], str]) -> None:
        self._client, self._asker = client, asker
        self.on = False  # asking at every cap (a worker's --ask, the ask_at_caps trait)
        self.timeout = DEFAULT_ASK_TIMEOUT
        self.answers_from: tuple[str, ...] = ()  # only these users' answers count
        self.log: Callable[[str], None] = log.info
        self._runs = 0  # runs started with asking on for them alone (`%ollie run --ask`)
        self._asking: dict[tuple[int, CapKind], asyncio.Future[CapAnswer]] = {}
        self._waiting: dict[tuple[int, CapKind], int] = {}  # requests waiting on each ask
        self._withdrawing: set[asyncio.Future[None]] = set()  # asks no one waits on, answered

    def hold(self) -> None:
        """Asking is on until `release` (one run's `--ask`; holds nest)."""
        self._runs += 1

    def release(self) -> None:
        """One `hold` is over."""
        self._runs = max(self._runs - 1, 0)

    @contextlib.contextmanager
    def during(self, on: bool = True) -> Iterator[None]:
        """Asking is on while the block runs, when `on`."""
        if on:
            self.hold()
        try:
            yield
        finally:
            if on:
                self.release()

    @property
    def asking(self) -> bool:
        """Whether a reached cap asks now: on for every run, or for the runs under way."""
        return self.on or self._runs > 0

    def _inbox(self) -> TaskClient | None:
        """The task store to ask, when asking is on and the store keeps an inbox."""
        if not self.asking:
            return None
        client = self._client()
        return client if client is not None and client.caps.inbox else None

    def will_ask(self, error: BudgetExceededError) -> bool:
        """Whether a request meeting this reached cap would ask (and so wait), not stop."""
        ledger = error.ledger
        if ledger is None or self._inbox() is None:
            return False
        return ledger.stopped.get(error.kind) != error.cap

    async def settle(self, error: BudgetExceededError, step: StepRef | None) -> bool:
        """Ask about the reached cap (or wait for the answer already asked for); True when
        it was raised and the request may be tried again, False: it stops as without asking."""
        ledger, client = error.ledger, self._inbox()
        if ledger is None or client is None or not self.will_ask(error):
            return False
        key = (id(ledger), error.kind)
        if key not in self._asking:
            asking = asyncio.ensure_future(self._ask(client, error, ledger, step))
            self._asking[key] = asking
            asking.add_done_callback(lambda _: self._asking.pop(key, None))
        asked = self._asking[key]
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            answer = await asyncio.shield(asked)
        finally:
            self._waiting[key] -= 1
            if not self._waiting[key]:
                del self._waiting[key]
                asked.cancel()  # all who waited were stopped: the request is withdrawn
        return answer.amount > 0

    async def _ask(
        self, client: TaskClient, error: BudgetExceededError, ledger: Ledger, step: StepRef | None
    ) -> CapAnswer:
        """One inbox request for the cap; its answer applied to the ledger."""
        what = cap_question(error)
        goal, task = (step.goal_id, step.step_id) if step is not None and step.goal_id else ("", "")
        request = "the cap"  # its id once asked
        try:
            request = await client.ask(
                "cap", what, self._asker(), goal=goal, step=task, timeout=self.timeout
            )
            self.log(f"asked: {request} {what} (waits {self.timeout:g} s for an answer)")
            row = await client.wait_answer(request, self.timeout + ANSWER_MARGIN)
        except asyncio.CancelledError:  # Stop: no board keeps asking what no one waits on
            if request != "the cap":
                withdrawn = asyncio.ensure_future(self._withdraw(client, request))
                self._withdrawing.add(withdrawn)
                withdrawn.add_done_callback(self._withdrawing.discard)
            raise
        except (OllieError, ValueError) as exc:  # ValueError: an unreadable inbox page
            answer = CapAnswer(why=f"the inbox could not be asked ({exc})")
        else:
            answer = CapAnswer.of(row, self.answers_from)
        if answer.amount > 0:
            ledger.raise_cap(error.kind, answer.amount)
            self.log(f"answered: {request} raise by {_amount_text(error.kind, answer.amount)}")
        else:
            ledger.stopped[error.kind] = error.cap
            self.log(f"stopped: {request} {answer.why}")
        return answer

    async def _withdraw(self, client: TaskClient, request: str) -> None:
        """Answer `stop` to a request whose work was stopped (answered meanwhile: theirs)."""
        try:
            await client.answer(request, "stop")
        except (OllieError, ValueError) as exc:
            self.log(f"{request} stays as the store has it: {exc}")
        else:
            self.log(f"withdrawn: {request} (the work that asked was stopped)")


def cap_question(error: BudgetExceededError) -> str:
    """The request's text: `plan 2 reached its $0.50 cap: $0.51 spent; raise by ... / stop`."""
    if error.scope is Scope.SESSION:
        whose = "the session"
    else:
        whose = f"{error.scope.value} {error.ledger.name if error.ledger else ''}".strip()
    if error.kind is CapKind.COST:
        cap, spent = _money(error.cap), f"{_money(error.spend.cost)} spent"
        unit = "dollars"
    else:
        cap, spent = f"{int(error.cap):,}-token", f"{error.spend.tokens:,} tokens used"
        unit = "tokens"
    return f"{whose} reached its {cap} cap: {spent}; raise by N {unit} (raise:N) / stop"


def _money(amount: float) -> str:
    """Dollars as a person reads a cap: $0.50, $12.00; below a cent as a cap is given."""
    return f"${amount:.2f}" if amount >= 0.01 else dollars(amount)


def _amount_text(kind: CapKind, amount: float) -> str:
    return _money(amount) if kind is CapKind.COST else f"{int(amount):,} tokens"
