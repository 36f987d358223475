"""A real IPython kernel for tests: run cells, collect outputs as a notebook would keep them."""

from __future__ import annotations

import os
import queue
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import KernelManager


@dataclass
class CellRun:
    """What one cell produced: outputs (display updates applied), error, and how long it took."""

    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    seconds: float = 0.0
    updates: int = 0
    msg_id: str = ""

    def texts(self) -> list[str]:
        """text/plain of every display/result output, and stream text."""
        out = []
        for o in self.outputs:
            if o["type"] == "stream":
                out.append(o["text"])
            elif "text/plain" in o.get("data", {}):
                out.append(o["data"]["text/plain"])
        return [t for t in out if t]

    def text(self) -> str:
        return "\n".join(self.texts())

    def html(self) -> str:
        return "\n".join(o.get("data", {}).get("text/html", "") for o in self.outputs)

    def stderr(self) -> str:
        return "".join(o["text"] for o in self.outputs if o.get("name") == "stderr")


class Kernel:
    """Start a python3 kernel (this interpreter) in `cwd` with `env`; run cells on it."""

    def __init__(self, cwd: str, env: dict[str, str] | None = None) -> None:
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        self.km = KernelManager(kernel_name="python3")
        self.km.kernel_spec.argv[0] = sys.executable  # this venv's Python, whatever PATH says
        self.km.start_kernel(cwd=cwd, env=full_env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(
        self,
        code: str,
        timeout: float = 60.0,
        on_message: Any = None,
        allow_stdin: bool = False,
        on_input: Any = None,
    ) -> CellRun:
        """Execute `code`; collect iopub output until the kernel is idle again.

        `allow_stdin=True` sends the request as a notebook a person uses does (nbclient,
        papermill and nbval send False: no one is there to answer). `on_input(prompt)`
        answers the kernel's input requests.
        """
        msg_id = self.kc.execute(code, allow_stdin=allow_stdin)
        run = CellRun(msg_id=msg_id)
        by_display: dict[str, int] = {}
        started = time.monotonic()
        while True:
            remaining = timeout - (time.monotonic() - started)
            if remaining <= 0:
                raise TimeoutError(f"cell did not finish in {timeout} s: {code[:60]!r}")
            if on_input is not None:
                self._answer_input(on_input)
            try:
                msg = self.kc.get_iopub_msg(timeout=min(remaining, 0.05) if on_input else remaining)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if on_message is not None:
                on_message(kind, content)
            if kind == "status" and content["execution_state"] == "idle":
                break
            if kind == "stream":
                last = run.outputs[-1] if run.outputs else {}
                if last.get("type") == "stream" and last.get("name") == content["name"]:
                    last["text"] += content["text"]  # coalesce, as a notebook does
                else:
                    run.outputs.append(
                        {"type": "stream", "name": content["name"], "text": content["text"]}
                    )
            elif kind in ("display_data", "execute_result"):
                run.outputs.append({"type": kind, "data": content["data"]})
                display_id = content.get("transient", {}).get("display_id")
                if display_id:
                    by_display[display_id] = len(run.outputs) - 1
            elif kind == "update_display_data":
                run.updates += 1
                display_id = content.get("transient", {}).get("display_id")
                if display_id in by_display:
                    run.outputs[by_display[display_id]]["data"] = content["data"]
            elif kind == "error":
                run.error = content
        run.seconds = time.monotonic() - started
        return run

    def _answer_input(self, on_input: Any) -> None:
        try:
            msg = self.kc.get_stdin_msg(timeout=0.01)
        except queue.Empty:
            return
        if msg["msg_type"] == "input_request":
            self.kc.input(on_input(msg["content"]["prompt"]))

    def reply(self, run: CellRun, timeout: float = 10.0) -> dict[str, Any]:
        """The execute_reply of a run (its payloads: set_next_input, ...)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_shell_msg(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") == run.msg_id:
                return msg["content"]
        raise TimeoutError(f"no execute_reply for {run.msg_id}")

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
