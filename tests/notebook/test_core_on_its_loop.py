"""The core only on its loop: no command reads or writes AgentCore from the kernel thread.

The runtime's core is swapped for a proxy that notes every attribute the kernel
(main) thread touches, then the commands run in a real kernel.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.notebook.test_frontend import kernel_env
from tests.support.kernel_harness import Kernel

WATCH = """
import threading, ollie_nb
from ollie_nb.notebook import _state

class Watched:
    \"\"\"The core, noting what the kernel thread reads or writes of it.\"\"\"

    def __init__(self, core):
        object.__setattr__(self, "_core", core)
        object.__setattr__(self, "off_loop", [])

    def _note(self, name):
        if threading.current_thread() is threading.main_thread():
            self.off_loop.append(name)

    def __getattr__(self, name):
        if name != "is_running":  # the runtime's busy flag: one read of a bool, by design
            self._note(name)
        return getattr(self._core, name)

    def __setattr__(self, name, value):
        self._note("=" + name)
        setattr(self._core, name, value)

ollie_nb.agent()  # the runtime starts
runtime = _state.active()
real = runtime.core
watched = runtime.core = Watched(real)
"""

COMMANDS = [
    "status",
    "backend",
    "backend offline",
    "models",
    "model offline",
    "agents",
    "agent",
    "mcp",
    "fallback",
    "fallback queue",
    "fallback off",
    "tools",
    "system",
    "cost",
    "debug",
    "plans",
    "queue",
    "watch",
    "subagents",
    "usage",
    "history",
    "context",
    "save",
    "cwd",
    "python",
    "stop",
]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("nb_loop")
    k = Kernel(str(base), kernel_env(base))
    assert k.run("%load_ext ollie_nb").error is None
    assert k.run(textwrap.dedent(WATCH)).error is None
    yield k
    k.shutdown()


@pytest.mark.parametrize("line", COMMANDS)
def test_a_command_touches_the_core_only_on_its_loop(kernel, line):
    kernel.run("watched.off_loop.clear()")
    run = kernel.run(f"%ollie {line}")
    assert run.error is None and "(a bug" not in run.text(), run.text()
    assert kernel.run("print(watched.off_loop)").text().strip() == "[]"


def test_use_backend_switches_on_the_loop(kernel):
    kernel.run("watched.off_loop.clear()")
    assert kernel.run("ollie_nb.use_backend('offline')").error is None
    assert kernel.run("print(watched.off_loop)").text().strip() == "[]"
