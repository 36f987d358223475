"""The notebook frontend: the IPython extension, the kernel's runtime, the Python handle.

`%load_ext ollie_nb` only registers the magics; the runtime (loop thread,
AgentCore, MCP sessions) starts on first use. Inside, imports point one way
(pyproject.toml's import-linter contract): `_magics` and `_api` on top, then the
`commands`, the widgets, the kernel's state (`_state`: the runtime singleton), the
renderers and displays, and the runtime at the bottom.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "agent",
    "close_runtime",
    "load_ipython_extension",
    "runtime_for",
    "set_fallback",
    "unload_ipython_extension",
    "use_backend",
]


def load_ipython_extension(ip: Any) -> None:
    """Register `%ollie` / `%%ollie` (and the OllieMagics config class)."""
    from ollie_nb.notebook._magics import load  # the magics module: only when loaded

    load(ip)


def unload_ipython_extension(ip: Any) -> None:
    """Close MCP sessions, stop the runtime thread and remove the magics."""
    from ollie_nb.notebook._magics import unload  # as in load_ipython_extension

    unload(ip)


def __getattr__(name: str) -> Any:
    """The Python API and the runtime, imported on first use (not at `%load_ext`)."""
    if name in ("agent", "set_fallback", "use_backend", "AgentHandle"):
        from ollie_nb.notebook import _api  # loads the tools layer: on first use

        return getattr(_api, name)
    if name in ("runtime_for", "close_runtime", "notebook_plan_backend"):
        from ollie_nb.notebook import _state  # kept out of `import ollie_nb.notebook`

        return getattr(_state, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
