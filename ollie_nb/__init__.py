"""ollie_nb: a planning LLM agent in the Jupyter kernel (`%load_ext ollie_nb`).

Importing the package is cheap: the notebook frontend, the agent core and the
MCP SDK load on first use.
"""

from __future__ import annotations

import logging
from typing import Any

__version__ = "0.1.0"

# A library logs; the application decides where it goes (not to stderr by default).
logging.getLogger("ollie_nb").addHandler(logging.NullHandler())


def load_ipython_extension(ip: Any) -> None:
    """`%load_ext ollie_nb`: register the `%ollie` and `%%ollie` magics."""
    from ollie_nb.notebook import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip: Any) -> None:
    """`%unload_ext ollie_nb`: close MCP sessions and stop the runtime thread."""
    from ollie_nb.notebook import unload_ipython_extension as unload

    unload(ip)


def set_fallback(obj: Any) -> None:
    """Plug a notebook-defined PlanBackend (object with create_plan, or a function) as the fallback."""
    from ollie_nb.notebook._api import set_fallback as set_

    set_(obj)


def use_backend(name_or_backend: Any, model: str | None = None) -> Any:
    """Switch the kernel agent's chat backend (offline, openai, openrouter, anthropic, ollama)."""
    from ollie_nb.notebook._api import use_backend as use

    return use(name_or_backend, model)


def agent() -> Any:
    """The kernel's agent handle (`ask`, `call`, `plans`, ...); the runtime starts on first use."""
    from ollie_nb.notebook._api import agent as kernel_agent

    return kernel_agent()


def tool(
    fn: Any = None, *, name: str | None = None, trusted: bool = True, sequential: bool = False
) -> Any:
    """`@ollie_nb.tool`: make a notebook function a tool of the kernel's agent (it stays a function).

    The schema comes from its type hints, the description from its docstring. Trusted
    by default (it is your code) unless the agent file's trustedTools leaves it out;
    `trusted=False` asks before every call; `sequential=True` runs its calls alone, never
    beside other calls of the same response. Redefining it replaces the tool.
    """
    from ollie_nb.notebook._api import tool as register

    return register(fn, name=name, trusted=trusted, sequential=sequential)


def add_tool(
    fn: Any, name: str | None = None, trusted: bool = True, sequential: bool = False
) -> str:
    """Register `fn` as a tool of the kernel's agent; returns the tool name."""
    from ollie_nb.notebook._api import add_tool as add

    return add(fn, name, trusted, sequential)


def remove_tool(name: str) -> bool:
    """Remove a notebook tool; False when none had that name."""
    from ollie_nb.notebook._api import remove_tool as remove

    return remove(name)
