"""ExecuteServer: `execute_code` runs bash or python in a subprocess in the agent's work dir."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ollie_nb.tools._bounds import DEFAULT_RESULT_CAP
from ollie_nb.tools._environ import subprocess_environ
from ollie_nb.tools._process import kill_group, start_group
from ollie_nb.tools._types import ToolInfo, ToolResult

SERVER_NAME = "execute"
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
_CHUNK = 64 * 1024  # bytes read from the pipe at a time

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "language": {"type": "string", "enum": ["bash", "python"], "default": "bash"},
        "code": {"type": "string", "description": "The script to run."},
        "timeout": {
            "type": "number",
            "description": f"Seconds before the process is killed (default {DEFAULT_TIMEOUT:g}).",
        },
    },
    "required": ["code"],
}


class ExecuteServer:
    """Runs code in a fresh subprocess per call; output is capped, time is bounded, Ctrl-C kills it.

    The process sees the kernel's environment without secret-named variables and
    without `secrets` (see `subprocess_environ`); `env_passthrough` names variables to
    pass all the same. Output is read up to `output_cap` bytes; a process that
    writes more is ended, so its output never piles up in memory.
    """

    def __init__(
        self,
        workdir: str | Callable[[], str] = ".",
        *,
        python: str = sys.executable,
        env_passthrough: Sequence[str] = (),
        secrets: Sequence[str] | Callable[[], Sequence[str]] = (),
        output_cap: int = DEFAULT_RESULT_CAP,
    ) -> None:
        self._workdir = workdir
        self.python = python
        self.env_passthrough = tuple(env_passthrough)
        self._secrets = secrets
        self.output_cap = output_cap

    @property
    def workdir(self) -> str:
        return self._workdir() if callable(self._workdir) else self._workdir

    async def list_tools(self) -> list[ToolInfo]:
        return [
            ToolInfo(
                SERVER_NAME,
                "execute_code",
                "Run a bash or python script in the work directory; returns exit code and output.",
                SCHEMA,
            )
        ]

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name != "execute_code":
            return ToolResult.error(f"unknown tool {name!r}; this server has execute_code")
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            return ToolResult.error("'code' is required: the script to run")
        language = args.get("language") or "bash"
        if language not in ("bash", "python"):
            return ToolResult.error(f"'language' must be bash or python, got {language!r}")
        timeout = args.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            return ToolResult.error("'timeout' must be a positive number of seconds")
        timeout = min(float(timeout), MAX_TIMEOUT)
        argv = [self.python, "-c", code] if language == "python" else ["bash", "-c", code]
        return await self._run(argv, timeout)

    async def _run(self, argv: list[str], timeout: float) -> ToolResult:
        workdir = self.workdir
        secrets = self._secrets() if callable(self._secrets) else self._secrets
        env = subprocess_environ(secrets=secrets, passthrough=self.env_passthrough)
        try:
            proc = await start_group(
                asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                    cwd=workdir,
                    env=env,
                    start_new_session=True,
                )
            )
        except OSError as exc:
            return ToolResult.error(f"cannot start {argv[0]}: {exc}")
        try:
            out, overflow = await asyncio.wait_for(self._collect(proc), timeout)
        except asyncio.TimeoutError:
            kill_group(proc)
            await proc.wait()
            return ToolResult.error(f"killed after {timeout:g} s (timeout)")
        except asyncio.CancelledError:
            kill_group(proc)
            await proc.wait()
            raise
        text = out.decode("utf-8", "replace")
        if overflow:
            return ToolResult(
                f"killed after {self.output_cap} bytes of output (output cap); "
                f"the rest was not read\n{text}",
                is_error=True,
            )
        code = proc.returncode
        return ToolResult(f"exit code {code}\n{text}".rstrip(), is_error=code != 0)

    async def _collect(self, proc: asyncio.subprocess.Process) -> tuple[bytes, bool]:
        """Read the output up to the cap; past it, end the process group and stop reading."""
        assert proc.stdout is not None
        out = bytearray()
        while len(out) <= self.output_cap:
            chunk = await proc.stdout.read(_CHUNK)
            if not chunk:
                await proc.wait()
                return bytes(out), False
            out += chunk
        kill_group(proc)
        await proc.wait()
        return bytes(out[: self.output_cap]), True

    async def aclose(self) -> None:
        return None
