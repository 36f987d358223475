"""Plan without a notebook: the reasoning server, a fallback PlanBackend, and the plan text."""

from __future__ import annotations

import asyncio

from ollie_nb.core import AgentConfig, connect_tool_servers
from ollie_nb.tools import Dispatcher


class DictPlans:
    """A fallback PlanBackend kept in a dict, as a notebook user might write one."""

    def __init__(self) -> None:
        self.rows: dict[str, str] = {}

    def create_plan(self, goal, steps):
        ids = [f"row-{len(self.rows) + i + 1}" for i in range(len(steps))]
        self.rows.update(zip(ids, (s.title for s in steps)))
        return ids


async def main() -> None:
    plans = DictPlans()
    env = await connect_tool_servers(AgentConfig(), Dispatcher(), ".", fallback_plan_backend=plans)
    print("plan backend:", env.plan_backend_reason)
    result = await env.dispatcher.dispatch(
        "reasoning",
        "reasoning_plan",
        {
            "goal": "Publish the quarterly report",
            "steps": [
                {"title": "Collect the numbers"},
                {"title": "Draw the charts", "after": [0]},
                {"title": "Write the summary", "after": [0]},
                {"title": "Publish", "after": [1, 2]},
            ],
        },
    )
    print(result.text)
    print("fallback store:", plans.rows)
    await env.aclose()


if __name__ == "__main__":
    asyncio.run(main())
