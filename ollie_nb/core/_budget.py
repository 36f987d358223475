"""Spend caps: what a session, a plan run and a sub-agent may spend, checked before each request.

Each turn counts its requests' tokens and cost in a `Ledger`; a ledger has a parent (a
sub-agent's is its plan run's or its session's, a plan run's is the session's), and every
request is counted in the whole chain. Before a model request is sent, the chain is
checked: a cap already reached refuses it with a `BudgetExceededError` naming the cap and
the spend so far. A cap is reached when the spend is at or past it (as ollie's
OLLIE_MAX_SESSION_COST), so the request that crosses a cap is the last one sent.

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

    def reached(self, spend: Spend) -> str:
        """ "cost" or "tokens" when that cap is reached by `spend`, else ''."""
        if self.cost is not None and spend.cost >= self.cost:
            return "cost"
        if self.tokens is not None and spend.tokens >= self.tokens:
            return "tokens"
        return ""

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


def env_budgets(env: Mapping[str, str] | None = None) -> Budgets:
    """The session caps of the environment: OLLIE_MAX_SESSION_COST (and _TOKENS) as ollie
    reads it, a number above 0; anything else is no cap. Read at every request, as ollie."""
    env = os.environ if env is None else env
    return _env_caps(env.get(COST_ENV, ""), env.get(TOKENS_ENV, ""))


@lru_cache(maxsize=8)
def _env_caps(cost_text: str, tokens_text: str) -> Budgets:
    cost = _positive(COST_ENV, cost_text)
    tokens = _positive(TOKENS_ENV, tokens_text)
    if cost is None and tokens is None:
        return NO_BUDGETS
    return Budgets(session=Caps(cost, None if tokens is None else int(tokens)))


class BudgetExceededError(OllieUsageError):
    """A cap is reached: the model request was not sent. The message names the cap and the
    spend so far."""

    def __init__(self, scope: Scope, name: str, kind: str, cap: float, spend: Spend) -> None:
        self.scope, self.kind, self.cap, self.spend = scope, kind, cap, spend
        whose = f"{scope.value} {name}'s" if name else f"the {scope.value}'s"
        if kind == "cost":
            what = f"cost cap {dollars(cap)}"
            so_far = f"{spend.cost_text} spent so far ({spend.tokens:,} tokens)"
        else:
            what = f"token cap {int(cap):,}"
            so_far = f"{spend.tokens:,} tokens used so far ({spend.cost_text})"
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
        self.spend = Spend()

    def chain(self) -> Iterator[Ledger]:
        """This ledger and its parents, innermost first."""
        ledger: Ledger | None = self
        while ledger is not None:
            yield ledger
            ledger = ledger.parent

    def add(self, usage: Usage) -> None:
        """Count one response's usage here and in every parent."""
        for ledger in self.chain():
            ledger.spend = ledger.spend.plus(usage.total_tokens, usage.cost)

    def exceeded(self) -> BudgetExceededError | None:
        """The first cap reached along the chain (innermost first), or None."""
        for ledger in self.chain():
            caps = ledger._caps()
            kind = caps.reached(ledger.spend)
            if kind:
                cap = caps.cost if kind == "cost" else caps.tokens
                assert cap is not None
                return BudgetExceededError(ledger.scope, ledger.name, kind, cap, ledger.spend)
        return None

    def check(self) -> None:
        """Raise BudgetExceededError when a cap along the chain is reached."""
        error = self.exceeded()
        if error is not None:
            raise error


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
