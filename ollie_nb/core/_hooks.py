"""Config hooks: shell commands fed a JSON payload on stdin (agentSpawn, userPromptSubmit, ...).

Exit 0 adds stdout as context; exit 2 blocks, with the output as the reason: a prompt
(userPromptSubmit), a tool call (preTool: the model reads the reason instead of a
result), or the end of a turn (stop: the agent continues); for postTool, exit 0 appends
stdout to the tool's result and exit 2 replaces the result. A turnError event whose
commands all exit 0 is handled. Any other exit is a warning. Each command gets
HOOK_TIMEOUT seconds. The payloads follow ollie's: preTool gets `tool` and `args` (the
call's arguments as JSON text), postTool those and `result`, turnError `error_type` and
`error`; every one also `hook_event_name`, `cwd` and `session_id`. As ollie does, each
text field of the payload is also in the command's environment as OLLIE_<FIELD>
($OLLIE_SESSION_ID, $OLLIE_TOOL, $OLLIE_ERROR_TYPE, ...), cut to ENV_VALUE_LIMIT
characters (stdin has it whole).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ollie_nb.tools._process import kill_group, read_bounded, start_group

HOOK_TIMEOUT = 60.0
OUTPUT_LIMIT = 64 * 1024  # bytes read of a hook's stdout and of its stderr
# Linux refuses to start a program given one environment string over 128 KiB (E2BIG):
# a long tool result stays whole on stdin and is cut in OLLIE_RESULT.
ENV_VALUE_LIMIT = 16 * 1024


@dataclass
class HookOutcome:
    """What a hook event's commands said, merged."""

    context: list[str] = field(default_factory=list)  # stdout of exit-0 commands
    block: str = ""  # reason, when a command exited 2
    warnings: list[str] = field(default_factory=list)
    ran: bool = False  # some command was run

    @property
    def handled(self) -> bool:
        """Every command ran and exited 0 (a turnError hook saying it dealt with the error)."""
        return self.ran and not self.block and not self.warnings


async def run_hooks(
    event: str,
    commands: Sequence[str],
    payload: Mapping[str, Any],
    cwd: str,
    timeout: float = HOOK_TIMEOUT,
    *,
    env: Mapping[str, str] | None = None,
) -> HookOutcome:
    """Run the event's commands in order; the first exit 2 stops the rest.

    `env` is the hooks' environment (AgentCore gives one without secrets); each
    command's output is read up to OUTPUT_LIMIT, past which the command is ended.
    """
    outcome = HookOutcome(ran=bool(commands))
    fields = {"hook_event_name": event, **payload}
    body = json.dumps(fields).encode()
    command_env = payload_env(fields, os.environ if env is None else env)
    for command in commands:
        code, out, err = await _run(command, body, cwd, timeout, command_env)
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


def payload_env(fields: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """`env` plus OLLIE_<FIELD> for each text field of the payload (NULs dropped, cut)."""
    named = {
        "OLLIE_" + key.upper(): value.replace("\0", "")[:ENV_VALUE_LIMIT]
        for key, value in fields.items()
        if isinstance(value, str) and key.isidentifier()
    }
    return {**env, **named}


async def _run(
    command: str, body: bytes, cwd: str, timeout: float, env: Mapping[str, str]
) -> tuple[int | None, str, str]:
    try:
        proc = await start_group(
            asyncio.create_subprocess_shell(
                command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd if os.path.isdir(cwd) else None,
                env=dict(env),
                start_new_session=True,
            )
        )
    except OSError as exc:
        return 127, "", str(exc)
    try:
        out, err = await asyncio.wait_for(_exchange(proc, body), timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
        kill_group(proc)
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return None, "", ""
    decode: Callable[[bytes], str] = lambda b: b.decode("utf-8", "replace")  # noqa: E731
    return proc.returncode, decode(out), decode(err)


async def _exchange(proc: asyncio.subprocess.Process, body: bytes) -> tuple[bytes, bytes]:
    """Feed the payload, read both pipes up to OUTPUT_LIMIT; a command past it is ended."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    async def feed() -> None:
        assert proc.stdin is not None  # asserted above; a closure does not keep the narrowing
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(body)
            await proc.stdin.drain()
            proc.stdin.close()

    (out, out_full), (err, err_full), _ = await asyncio.gather(
        read_bounded(proc.stdout, OUTPUT_LIMIT), read_bounded(proc.stderr, OUTPUT_LIMIT), feed()
    )
    if out_full or err_full:
        kill_group(proc)
    await proc.wait()
    return out, err


async def spawn_hooks(
    config: Any, workdir: str, session_id: str, env: Mapping[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """Run the agentSpawn hooks of an agent config: (context for the system prompt, warnings)."""
    commands = config.hooks.get("agentSpawn")
    if not commands:
        return [], []
    payload = {"cwd": workdir, "session_id": session_id, "agent": config.name}
    outcome = await run_hooks("agentSpawn", commands, payload, workdir, env=env)
    return outcome.context, outcome.warnings
