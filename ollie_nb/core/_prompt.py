"""The system prompt: who the agent is, where it works, how its plans are kept."""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Sequence

from ollie_nb.core._tool_servers import ToolServers
from ollie_nb.planning import TASK_LIST, TASK_UPDATE


def plans_sentence(env: ToolServers | None) -> str:
    """Which plan backend is wired and how the steps come back to the model."""
    if env is not None and env.task_server:
        return (
            f"Plans are persisted as tasks on the '{env.task_server}' MCP server: after "
            f"reasoning_plan, use {TASK_LIST} to see the ready steps (each has a task id), "
            f"work them, and mark each one done with {TASK_UPDATE} when you finish it."
        )
    backend = env.reasoning.plan_backend if env is not None else None
    if backend is not None and getattr(backend, "plan_kind", "") == "queue":
        return (
            "Plans go to the prompt queue: after reasoning_plan, stop; each step comes back "
            "to you later as its own queued prompt, one at a time."
        )
    if backend is not None:
        return (
            f"Plans are handed to {env.reasoning.plan_backend_label}; "  # type: ignore[union-attr]
            "its answer after reasoning_plan says how the steps come back."
        )
    return "Plans stay in this conversation only: work the steps yourself, in order."


def system_prompt(
    env: ToolServers | None, workdir: str, agent_prompt: str, context: Sequence[str] = ()
) -> str:
    """The assembled system prompt (agent prompt and agentSpawn hook context last)."""
    parts = [
        "You are ollie, an agent that works inside a Jupyter notebook kernel with tools.",
        f"Work dir: {workdir}",
        f"Platform: {platform.system()} {platform.machine()}, Python {sys.version.split()[0]}",
        f"Date: {time.strftime('%Y-%m-%d')}",
        "For work of more than a couple of steps, call reasoning_plan first (goal, steps, "
        "after = 0-based indexes of earlier steps), then work the steps in order. "
        + plans_sentence(env),
    ]
    if agent_prompt:
        parts.append(agent_prompt)
    parts.extend(context)
    return "\n".join(parts)
