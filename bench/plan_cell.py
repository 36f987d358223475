"""A large plan made by a `%%ollie` cell in a kernel, against the same submit without one.

Both sides use the offline planner and a task server of their own (a fresh SQLite file per
repeat); ours is the cell in a real IPython kernel (jupyter_client), timed inside the kernel
around the magic, so it holds the notebook's rendering and display messages; the baseline
is `AgentCore.submit` of the same prompt in this process. The agent starts outside the
timing on both sides. Repeats alternate the two.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from pathlib import Path
from typing import Any

from bench._report import Figure
from bench._run import Row, Settings, median, paired_ratio
from bench._servers import task_server_config
from ollie_nb.core import AgentCore
from ollie_nb.llm import OfflineBackend

GOAL = 1.3
_SECONDS = "plan-cell-seconds="


def _prompt(steps: int) -> str:
    return "Ship it\n" + "\n".join(f"- Step number {i}" for i in range(1, steps + 1))


def _agent_file(scratch: Path, name: str) -> Path:
    path = scratch / f"{name}.json"
    config = {"mcpServers": {"tasks": task_server_config(scratch / f"{name}.db")}}
    path.write_text(json.dumps(config))
    return path


class _Kernel:
    """One python3 kernel of this interpreter, running cells and returning their text."""

    def __init__(self, cwd: Path) -> None:
        from jupyter_client.manager import KernelManager

        self.km = KernelManager(kernel_name="python3")
        self.km.kernel_spec.argv[0] = sys.executable
        self.km.start_kernel(cwd=str(cwd), env=dict(os.environ))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code: str, timeout: float = 900.0) -> str:
        msg_id = self.kc.execute(code)
        texts: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg: Any = self.kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise TimeoutError(f"cell did not finish in {timeout:g} s") from None
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                return "".join(texts)
            if kind == "stream":
                texts.append(content["text"])
            elif kind == "error":
                raise RuntimeError(f"cell failed: {content['ename']}: {content['evalue']}")

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def _cell(kernel: _Kernel, agent: Path, prompt: str) -> float:
    kernel.run(f"%ollie agent {agent}")
    code = (
        f"import time as _t\n_s = _t.perf_counter()\n"
        f"get_ipython().run_cell_magic('ollie', '', {prompt!r})\n"
        f"print('{_SECONDS}' + str(_t.perf_counter() - _s))"
    )
    out = kernel.run(code)
    return float(out.rsplit(_SECONDS, 1)[1].split()[0])


async def _submit(agent: Path, prompt: str, workdir: Path) -> float:
    core = AgentCore(OfflineBackend(), agent=str(agent), workdir=str(workdir), autosave=False)
    try:
        await core.start()
        began = time.perf_counter()
        result = await core.submit(prompt)
        seconds = time.perf_counter() - began
        if result.error or not core.plans or not core.plans[-1].persisted:
            raise RuntimeError(f"the submit did not persist its plan: {result}")
    finally:
        await core.aclose()
    return seconds


async def run(settings: Settings) -> list[Figure]:
    """Alternate the kernel cell and the bare submit, a fresh task database each."""
    steps = settings.size(1000, 10)
    repeats = settings.repeats(3, 2)
    prompt = _prompt(steps)
    kernel = _Kernel(settings.scratch)
    cells: list[float] = []
    bare: list[float] = []
    try:
        kernel.run("%load_ext ollie_nb\n%config OllieMagics.backend = 'offline'")
        for i in range(repeats):
            order = ("cell", "bare") if i % 2 == 0 else ("bare", "cell")
            for side in order:
                agent = _agent_file(settings.scratch, f"plan-cell-{side}-{i}")
                if side == "cell":
                    cells.append(_cell(kernel, agent, prompt))
                else:
                    bare.append(await _submit(agent, prompt, settings.scratch))
    finally:
        kernel.close()
    ratio = paired_ratio(cells, bare)
    return [
        Figure(
            what=f"{steps}-step plan: %%ollie cell in a kernel",
            unit="s",
            ours=median(cells),
            baseline=median(bare),
            baseline_what="AgentCore.submit of the same prompt, no notebook",
            max_ratio=GOAL,
            samples=repeats,
            paired=ratio,
            note="offline planner, a task server per run (fresh SQLite file)",
        )
    ]


ROW = Row("plan-cell", "A large plan from a notebook cell", run)
