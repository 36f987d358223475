"""A worker for the workers row: `python bench/worker_proc.py AGENT_JSON NAME SECONDS`.

The headless worker of `python -m ollie_nb work` (ollie_nb/core/_worker.py), its model the
offline one with each step turn taking SECONDS first (the step's own work). It works
every plan of the agent's task store until SIGTERM, one step at a time.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from ollie_nb.core import AgentCore
from ollie_nb.core._worker import Worker, WorkOptions
from ollie_nb.llm import OfflineBackend
from ollie_nb.llm._offline import demo_reply, is_step_prompt


def slow(seconds: float):
    async def reply(messages, tools):
        if messages[-1].role == "user" and is_step_prompt(messages[-1].content):
            await asyncio.sleep(seconds)
        return demo_reply(messages, tools)

    return reply


async def main(agent: str, name: str, seconds: float) -> int:
    core = AgentCore(OfflineBackend(slow(seconds)), agent=agent, name=name, autosave=False)
    worker = Worker(core, WorkOptions(agent, name=name, every=True), lambda line: None)
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop, "SIGTERM")
    async with core:
        print("ready", flush=True)
        return await worker.run()


if __name__ == "__main__":
    agent, name, seconds = sys.argv[1:4]
    raise SystemExit(asyncio.run(main(agent, name, float(seconds))))
