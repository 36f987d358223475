"""ExecuteServer: `execute_code` runs bash or python in a subprocess in the agent's work dir."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from ollie_nb.tools._process import kill_group
from ollie_nb.tools._types import ToolInfo, ToolResult

SERVER_NAME = "execute"
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
OUTPUT_CAP = 32 * 1024  # characters kept of a command's output (head and tail)

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
    """Runs code in a fresh subprocess per call; output is capped, time is bounded, Ctrl-C kills it."""

    def __init__(
        self, workdir: str | Callable[[], str] = ".", *, python: str = sys.executable
    ) -> None:
        self._workdir = workdir
        self.python = python

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
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=workdir,
                start_new_session=True,
            )
        except OSError as exc:
            return ToolResult.error(f"cannot start {argv[0]}: {exc}")
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            kill_group(proc)
            await proc.wait()
            return ToolResult.error(f"killed after {timeout:g} s (timeout)")
        except asyncio.CancelledError:
            kill_group(proc)
            await proc.wait()
            raise
        text = _cap(out.decode("utf-8", "replace"))
        code = proc.returncode
        return ToolResult(f"exit code {code}\n{text}".rstrip(), is_error=code != 0)

    async def aclose(self) -> None:
        return None


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    half = OUTPUT_CAP // 2
    cut = len(text) - OUTPUT_CAP
    return f"{text[:half]}\n[... {cut} characters cut ...]\n{text[-half:]}"
