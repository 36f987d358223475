"""Claim leases: how long a step's claim holds, and the heartbeat that renews it.

A task server that knows leases (`task_claim(id, assignee, lease)`) ends a claim that
is not renewed in time, so the step of a dead claimer goes back to `open`. The agent's
claimers ask for `claimLease` seconds and renew every third of it while the step's turn
runs: with `task_heartbeat` when the server has it, else by claiming again. A server
whose `task_claim` takes no lease is called as before, and nothing is renewed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ollie_nb.planning import TaskClient

HEARTBEATS_PER_LEASE = 3


@dataclass(frozen=True)
class LeasePolicy:
    """A claim's lease (`seconds`, 0 for none) and the tool that renews it ('' for none)."""

    seconds: float = 0.0
    renew: str = ""  # "task_heartbeat", "task_claim" or "" (the server has no leases)

    @property
    def active(self) -> bool:
        return self.seconds > 0 and bool(self.renew)

    @property
    def interval(self) -> float:
        return self.seconds / HEARTBEATS_PER_LEASE

    @classmethod
    def for_tools(cls, seconds: float, schemas: dict[str, dict[str, Any]]) -> LeasePolicy:
        """The policy a server's tools allow (`schemas`: tool name -> input schema)."""
        claim = schemas.get("task_claim")
        if claim is None or "lease" not in (claim.get("properties") or {}):
            return cls()
        if seconds <= 0:
            return cls(0.0, "task_claim")  # lease=0: a claim without expiry
        renew = "task_heartbeat" if "task_heartbeat" in schemas else "task_claim"
        return cls(float(seconds), renew)


NO_LEASE = LeasePolicy()
"""Claims as a server without leases takes them: nothing to renew."""


async def heartbeat(
    client: TaskClient,
    task_id: str,
    assignee: str,
    policy: LeasePolicy,
    lost: Callable[[str], None],
) -> None:
    """Renew the claim every `policy.interval` s until cancelled; `lost(why)` when refused.

    Runs for ever without a lease (a task server without them, or `claimLease: 0`).
    """
    if not policy.active:
        await asyncio.Event().wait()
    while True:
        await asyncio.sleep(policy.interval)
        why = await client.renew(task_id, assignee, policy.seconds, policy.renew)
        if why:
            lost(why)
            return
