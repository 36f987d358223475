"""Config hooks: shell commands fed a JSON payload on stdin (agentSpawn, userPromptSubmit, stop).

Exit 0 adds stdout as context; exit 2 blocks a prompt (userPromptSubmit) or
makes the agent continue (stop), with the output as the reason; any other exit
is a warning. Each command gets HOOK_TIMEOUT seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ollie_nb.tools._process import kill_group

HOOK_TIMEOUT = 60.0
_OUTPUT_LIMIT = 64 * 1024


@dataclass
class HookOutcome:
    """What a hook event's commands said, merged."""

    context: list[str] = field(default_factory=list)  # stdout of exit-0 commands
    block: str = ""  # reason, when a command exited 2
    warnings: list[str] = field(default_factory=list)


async def run_hooks(
    event: str,
    commands: Sequence[str],
    payload: Mapping[str, Any],
    cwd: str,
    timeout: float = HOOK_TIMEOUT,
) -> HookOutcome:
    """Run the event's commands in order; the first exit 2 stops the rest."""
    outcome = HookOutcome()
    body = json.dumps({"hook_event_name": event, **payload}).encode()
    for command in commands:
        code, out, err = await _run(command, body, cwd, timeout)
        if code == 0:
            if out.strip():
                outcome.context.append(out.strip())
        elif code == 2:
            outcome.block = (err.strip() or out.strip() or f"blocked by hook: {command}")[:2000]
            break
        elif code is None:
            outcome.warnings.append(f"{event} hook timed out after {timeout:g} s: {command}")
        else:
            detail = (err.strip() or out.strip()).splitlines()
            tail = f": {detail[-1]}" if detail else ""
            outcome.warnings.append(f"{event} hook exited {code}{tail} ({command})")
    return outcome


async def _run(command: str, body: bytes, cwd: str, timeout: float) -> tuple[int | None, str, str]:
    try:
        proc = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd if os.path.isdir(cwd) else None,
            start_new_session=True,
        )
    except OSError as exc:
        return 127, "", str(exc)
    try:
        out, err = await asyncio.wait_for(proc.communicate(body), timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
        kill_group(proc)
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return None, "", ""
    decode = lambda b: b[:_OUTPUT_LIMIT].decode("utf-8", "replace")  # noqa: E731
    return proc.returncode, decode(out), decode(err)


async def spawn_hooks(config: Any, workdir: str, session_id: str) -> tuple[list[str], list[str]]:
    """Run the agentSpawn hooks of an agent config: (context for the system prompt, warnings)."""
    commands = config.hooks.get("agentSpawn")
    if not commands:
        return [], []
    payload = {"cwd": workdir, "session_id": session_id, "agent": config.name}
    outcome = await run_hooks("agentSpawn", commands, payload, workdir)
    return outcome.context, outcome.warnings
