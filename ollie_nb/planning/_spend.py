"""Spend: the tokens and money a piece of work used (a model request, a step, a plan, a session).

It lives with the plans because the graph and the plan listings show it per step; the core
counts it (core/_budget.py) and the price table fills its cost (llm/_prices.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Spend:
    """Tokens and dollars used; `unpriced` counts the requests whose price is not known."""

    tokens: int = 0
    cost: float = 0.0  # dollars, of the requests with a known price
    unpriced: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.tokens + other.tokens, self.cost + other.cost, self.unpriced + other.unpriced
        )

    def __sub__(self, other: Spend) -> Spend:
        return Spend(
            self.tokens - other.tokens, self.cost - other.cost, self.unpriced - other.unpriced
        )

    @classmethod
    def total(cls, spends: Iterable[Spend]) -> Spend:
        out = cls()
        for spend in spends:
            out = out + spend
        return out

    @property
    def cost_text(self) -> str:
        """The money: "$0.0123", "no price known", or "$0.0123 + requests with no price"."""
        if self.unpriced and not self.cost:
            return "no price known"
        text = f"${self.cost:.4f}"
        if self.unpriced:
            requests = "request" if self.unpriced == 1 else "requests"
            text += f" + {self.unpriced} {requests} with no price known"
        return text

    def __str__(self) -> str:
        return f"{self.tokens:,} tokens, {self.cost_text}"
