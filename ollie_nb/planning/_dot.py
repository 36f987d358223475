"""Running Graphviz: import the package on demand, and run `dot` with a timeout.

graphviz is imported inside the drawing functions only, so importing the planning
package stays cheap and works where graphviz is not installed.
"""

from __future__ import annotations

import re
import subprocess
from types import ModuleType
from typing import TYPE_CHECKING

from ollie_nb.errors import UnavailableError

if TYPE_CHECKING:
    import graphviz

INSTALL_HINT = "apt-get install graphviz, brew install graphviz or conda install graphviz"
"""How to get the `dot` program, named in every GraphvizUnavailable message."""


class GraphvizUnavailable(UnavailableError):
    """Graphviz (the `dot` program or the Python package) is missing; the text plan still works."""


class GraphTimeout(GraphvizUnavailable):
    """`dot` did not finish in time and was stopped; the text plan still works."""


DOT_TIMEOUT = 15.0
"""Seconds `dot` may take for one drawing. A 1000-step plan (the most a plan may have)
draws in about 3.5 s on a busy 2-core machine; a graph dot cannot lay out in reasonable
time (41 steps each after all earlier ones once took 49 s) must not hold the kernel."""


def require_graphviz() -> ModuleType:
    """Import the graphviz package, or say how to install it."""
    try:
        import graphviz
    except ImportError as exc:
        raise GraphvizUnavailable(
            "cannot draw the plan graph: the graphviz Python package is not installed "
            f"(pip install graphviz; and the dot program: {INSTALL_HINT})"
        ) from exc
    module: ModuleType = graphviz  # the package has no type information: Any to mypy
    return module


# Everything dot writes before the <svg> element: XML prolog, doctype, and comments
# naming the graphviz version, which would make saved outputs differ between machines.
_SVG_START = re.compile(r"<svg\b")


def svg_of(graph: graphviz.Digraph, timeout: float = DOT_TIMEOUT) -> str:
    """Run dot on a graph and return inline-ready SVG (see plan_svg for the errors)."""
    try:
        text = _run_dot(graph.source, timeout)
    except _DotFailed:
        if graph.graph_attr.get("concentrate") != "true":
            raise
        # Some dot versions fail on rare shapes with merged edges; draw them unmerged.
        graph = graph.copy()
        del graph.graph_attr["concentrate"]
        text = _run_dot(graph.source, timeout)
    match = _SVG_START.search(text)
    return text[match.start() :] if match else text


class _DotFailed(GraphvizUnavailable):
    """dot exited with an error status; like a missing dot, the text plan still works."""


def _run_dot(source: str, timeout: float) -> str:
    """`dot -Tsvg` on DOT source, killed after `timeout` seconds.

    A subprocess of our own rather than graphviz's `pipe`, which has no timeout.
    """
    try:
        done = subprocess.run(
            ["dot", "-Tsvg"], input=source.encode("utf-8"), capture_output=True, timeout=timeout
        )
    except FileNotFoundError as exc:
        raise GraphvizUnavailable(
            "cannot draw the plan graph: the Graphviz dot program is not installed "
            f"({INSTALL_HINT})"
        ) from exc
    except subprocess.TimeoutExpired:
        raise GraphTimeout(
            f"cannot draw the plan graph: dot took longer than {timeout:g} s and was stopped"
        ) from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit status {done.returncode}"
        raise _DotFailed(f"cannot draw the plan graph: dot failed ({reason})")
    return done.stdout.decode("utf-8")
