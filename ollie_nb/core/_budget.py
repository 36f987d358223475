"""Spend caps: what a session, a plan run and a sub-agent may spend, checked before each request.

Each turn counts its requests' tokens and cost in a `Ledger`; a ledger has a parent (a
sub-agent's is its plan run's or its session's, a plan run's is the session's), and every
request is counted in the whole chain. The model gateway (core/_model_gateway.py) reserves
each request on the chain before it is sent: a cap reached by the spend plus the requests
in flight refuses it with a `BudgetExceededError` naming the cap and the spend so far, so
concurrent requests cannot all pass one check. A cap is reached when the spend is at or
past it (as ollie's OLLIE_MAX_SESSION_COST), so the request that crosses a cap is the last
one sent.

Caps come from the agent file (`maxSessionCost`, `maxPlanTokens`, ...), the environment
(`OLLIE_MAX_SESSION_COST` as ollie reads it) and the notebook's traits; every cap given
binds, so the lowest of each wins.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import TypeVar

from ollie_nb.core._history import UsageTotals
from ollie_nb.errors import OllieUsageError
from ollie_nb.llm import Usage
from ollie_nb.planning import Spend

log = logging.getLogger("ollie_nb.core")
_N = TypeVar("_N", int, float)

COST_ENV = "OLLIE_MAX_SESSION_COST"  # ollie's: dollars; unset, unreadable or <= 0 is no cap
TOKENS_ENV = "OLLIE_MAX_SESSION_TOKENS"  # ours, read the same way: tokens in and out


class Scope(str, Enum):
    """What a ledger counts, as a cap's message names it."""

    SESSION = "session"
    PLAN = "plan"  # a plan run: a parallel run, or the agent's own turns on the plan
    SUBAGENT = "sub-agent"
    STEP = "step"  # a step worked by the agent itself: counted for the graph, not capped


class CapKind(str, Enum):
    """Which cap of a `Caps` is reached: the dollars or the tokens."""

    COST = "cost"
    TOKENS = "tokens"


@dataclass(frozen=True)
class Caps:
    """A cap in dollars and one in tokens (input plus output); None: no cap."""

    cost: float | None = None
    tokens: int | None = None

    def tighter(self, other: Caps) -> Caps:
        """Each cap the lower of the two (a missing one does not count)."""
        if not other:
            return self
        return Caps(_lower(self.cost, other.cost), _lower(self.tokens, other.tokens))

    def reached(self, spend: Spend) -> CapKind | None:
        """The cap `spend` has reached (the dollars' first), or None."""
        if self.cost is not None and spend.cost >= self.cost:
            return CapKind.COST
        if self.tokens is not None and spend.tokens >= self.tokens:
            return CapKind.TOKENS
        return None

    def limit(self, kind: CapKind) -> float:
        """The cap of that kind (one that is set)."""
        cap = self.cost if kind is CapKind.COST else self.tokens
        assert cap is not None
        return cap

    def plus(self, raised: Caps) -> Caps:
        """Each cap that is set, raised by `raised`'s amount of its kind (None: by nothing)."""
        if not raised:
            return self
        cost = None if self.cost is None else self.cost + (raised.cost or 0.0)
        tokens = None if self.tokens is None else self.tokens + (raised.tokens or 0)
        return Caps(cost, tokens)

    def __bool__(self) -> bool:
        return self.cost is not None or self.tokens is not None


@dataclass(frozen=True)
class Budgets:
    """The caps of a session, of each plan run and of each sub-agent."""

    session: Caps = Caps()
    plan: Caps = Caps()
    subagent: Caps = Caps()

    def tighter(self, other: Budgets) -> Budgets:
        if other is NO_BUDGETS or other == NO_BUDGETS:  # the common case, at every request
            return self
        return Budgets(
            self.session.tighter(other.session),
            self.plan.tighter(other.plan),
            self.subagent.tighter(other.subagent),
        )


NO_BUDGETS = Budgets()
NOTHING = Spend()  # no spend: what a ledger starts with


def env_budgets(env: Mapping[str, str] | None = None) -> Budgets:
    """The session caps of the environment: OLLIE_MAX_SESSION_COST (and _TOKENS) as ollie
    reads it, a number above 0; anything else is no cap. Read at every request, as ollie."""
    env = os.environ if env is None else env
    return _env_caps(env.get(COST_ENV, ""), env.get(TOKENS_ENV, ""))


@lru_cache(maxsize=8)
def _env_caps(cost_text: str, tokens_text: str) -> Budgets:
    cost = _positive(COST_ENV, cost_text)
    tokens = _whole_tokens(_positive(TOKENS_ENV, tokens_text), tokens_text)
    if cost is None and tokens is None:
        return NO_BUDGETS
    return Budgets(session=Caps(cost, tokens))


class BudgetExceededError(OllieUsageError):
    """A cap is reached: the model request was not sent. The message names the cap and the
    spend so far."""

    def __init__(
        self,
        scope: Scope,
        name: str,
        kind: CapKind,
        cap: float,
        spend: Spend,
        in_flight: Spend = NOTHING,
        ledger: Ledger | None = None,
    ) -> None:
        self.scope, self.kind, self.cap, self.spend = scope, kind, cap, spend
        self.in_flight, self.ledger = in_flight, ledger  # the ledger whose cap it is
        whose = f"{scope.value} {name}'s" if name else f"the {scope.value}'s"
        if kind is CapKind.COST:
            what = f"cost cap {dollars(cap)}"
            so_far = f"{spend.cost_text} spent so far ({spend.tokens:,} tokens)"
        else:
            what = f"token cap {int(cap):,}"
            so_far = f"{spend.tokens:,} tokens used so far ({spend.cost_text})"
        if in_flight.tokens:
            so_far += f", and about {in_flight.tokens:,} tokens in requests under way"
        super().__init__(f"{whose} {what} is reached: {so_far}; the model request was not sent")


def dollars(amount: float) -> str:
    """Money as a cap is given: $0.0001, $0.25, $12.50."""
    return f"${amount:.2f}" if amount >= 1 else f"${amount:.4f}".rstrip("0").rstrip(".")


class Ledger:
    """The spend of one session, plan run, sub-agent or step, counted against its caps
    (`caps` is read at each check, so a changed cap applies to the next request)."""

    def __init__(
        self,
        scope: Scope,
        caps: Callable[[], Caps] = Caps,
        parent: Ledger | None = None,
        name: str = "",
    ) -> None:
        self.scope, self.name, self.parent = scope, name, parent
        self._caps = caps
        self.usage = UsageTotals()  # what its requests used, as reported
        self.in_flight = NOTHING  # the known input of its requests under way
        self.raised = Caps()  # what answers to a reached cap added to it (`raise:N`)
        self.stopped: dict[CapKind, float] = {}  # a cap answered stop, at the limit it had

    def caps(self) -> Caps:
        """Its caps now: as given, plus what answers raised them by."""
        return self._caps().plus(self.raised)

    def raise_cap(self, kind: CapKind, amount: float) -> None:
        """Raise its cap of `kind` by `amount` (dollars, or whole tokens)."""
        if kind is CapKind.COST:
            self.raised = Caps((self.raised.cost or 0.0) + amount, self.raised.tokens)
        else:
            self.raised = Caps(self.raised.cost, (self.raised.tokens or 0) + int(amount))

    @property
    def spend(self) -> Spend:
        """Tokens and dollars its answered requests used."""
        return self.usage.spend

    def chain(self) -> Iterator[Ledger]:
        """This ledger and its parents, innermost first."""
        ledger: Ledger | None = self
        while ledger is not None:
            yield ledger
            ledger = ledger.parent

    def add(self, usage: Usage) -> None:
        """Count one response's usage here and in every parent."""
        for ledger in self.chain():
            ledger.usage.add(usage)

    def exceeded(self) -> BudgetExceededError | None:
        """The first cap reached along the chain (innermost first) by what was spent, or
        None: whether work under this ledger should stop (a parallel run's check)."""
        return self._first_reached(in_flight=False)

    def check(self) -> None:
        """Raise BudgetExceededError when a cap along the chain is reached by the spend plus
        the requests in flight: whether one more request may be sent."""
        error = self._first_reached(in_flight=True)
        if error is not None:
            raise error

    def _first_reached(self, in_flight: bool) -> BudgetExceededError | None:
        for ledger in self.chain():
            caps, held = ledger.caps(), ledger.in_flight if in_flight else NOTHING
            kind = caps.reached(ledger.spend + held)
            if kind is not None:
                cap, spend, scope = caps.limit(kind), ledger.spend, ledger.scope
                return BudgetExceededError(scope, ledger.name, kind, cap, spend, held, ledger)
        return None

    def reserve(self, estimate: Spend) -> Reservation:
        """Check the chain, then hold `estimate` (a request's known input) on each ledger
        of it until the request is answered: a request sent meanwhile sees it."""
        self.check()
        for ledger in self.chain():
            ledger.in_flight = ledger.in_flight + estimate
        return Reservation(self, estimate)


class Reservation:
    """A request under way, held on its ledger chain until `release`d (once)."""

    def __init__(self, ledger: Ledger, estimate: Spend) -> None:
        self._ledger: Ledger | None = ledger
        self.estimate = estimate

    def release(self) -> None:
        """The request is over: its estimate leaves the chain (its real usage is added)."""
        ledger, self._ledger = self._ledger, None
        if ledger is None:
            return
        for held in ledger.chain():
            held.in_flight = held.in_flight - self.estimate


def _lower(a: _N | None, b: _N | None) -> _N | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _positive(name: str, raw: str) -> float | None:
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        log.warning("%s=%r is not a number: no cap", name, raw)
        return None
    return value if value > 0 else None


def _whole_tokens(value: float | None, raw: str) -> int | None:
    """A token cap of at least one token (a fraction above it rounds down); one of less
    would refuse every request, so it is said and is no cap."""
    if value is None:
        return None
    if value < 1:
        log.warning(
            "%s=%r is no cap: a token cap is a whole number of tokens, at least 1 (0 for none)",
            TOKENS_ENV,
            raw.strip(),
        )
        return None
    return int(value)


class SpendBook:
    """An agent's ledgers: its session's, each plan's, and what each plan step cost.

    The agent's own turns on a plan's steps (the watch, the queue) count in that plan's
    ledger, whose cap is the plan cap; a parallel run counts in a ledger of its own,
    from its start. Every step's spend is kept, by plan number and step id, for the
    graph, the run's summary and `%ollie plans`.
    """

    def __init__(self, budgets: Callable[[], Budgets]) -> None:
        self.budgets = budgets
        self.session = Ledger(Scope.SESSION, lambda: budgets().session)
        self._plans: dict[int, Ledger] = {}
        self._steps: dict[int, dict[str, Spend]] = {}

    def plan(self, number: int) -> Ledger:
        """The ledger of the agent's own turns on plan `number`'s steps."""
        if number not in self._plans:
            self._plans[number] = self.run(number)
        return self._plans[number]

    def run(self, number: int) -> Ledger:
        """A new ledger for one run of plan `number`, under the session's."""
        return Ledger(Scope.PLAN, lambda: self.budgets().plan, self.session, str(number))

    def subagent(self, name: str, parent: Ledger | None = None) -> Ledger:
        """A new ledger for a sub-agent's work, under `parent` (default: the session's)."""
        caps = lambda: self.budgets().subagent  # noqa: E731
        return Ledger(Scope.SUBAGENT, caps, parent or self.session, name)

    def record(self, plan: int, step_id: str, spend: Spend) -> None:
        """Add what working a step cost (a step worked twice counts both times)."""
        steps = self._steps.setdefault(plan, {})
        steps[step_id] = steps.get(step_id, Spend()) + spend

    def steps(self, plan: int) -> dict[str, Spend]:
        """Each worked step's spend, by step id."""
        return dict(self._steps.get(plan, {}))

    def plan_total(self, plan: int) -> Spend:
        return Spend.total(self._steps.get(plan, {}).values())
