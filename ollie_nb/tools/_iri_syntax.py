"""rfc3987_syntax builds its IRI grammars at the first IRI check, not when jsonschema loads.

The MCP SDK checks a tool's structured result with jsonschema, which it imports at the
first such result; jsonschema imports rfc3987_syntax (when installed, as Jupyter installs
it) for its `iri` formats, and that module compiles some 40 lark grammars as it loads:
2-6 s of CPU that made the first call of a stdio tool slow. A stand-in takes its place
until a schema with an `iri` format is actually checked; then the real module loads.
jsonschema itself (some 0.1-0.3 s) loads on a thread while the first server starts.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

NAME = "rfc3987_syntax"
_lock = threading.Lock()
_loading: list[threading.Thread] = []


def prepare_result_checks() -> None:
    """Before a server starts: defer the IRI grammars, and load jsonschema aside, once."""
    defer_iri_grammars()
    with _lock:
        if _loading or "jsonschema" in sys.modules:
            return
        loader = threading.Thread(target=_load_jsonschema, name="ollie-jsonschema", daemon=True)
        _loading.append(loader)
    loader.start()


def _load_jsonschema() -> None:
    """jsonschema, imported on its own thread (missing: the SDK says so when it needs it)."""
    with contextlib.suppress(ImportError):
        importlib.import_module("jsonschema")


def defer_iri_grammars() -> None:
    """Put the stand-in in place, unless the module is loaded already or not installed."""
    with _lock:
        if NAME in sys.modules or "jsonschema" in sys.modules:
            return
        spec = importlib.util.find_spec(NAME)
        if spec is None:
            return
        stand_in = types.ModuleType(NAME)
        stand_in.__spec__ = spec
        stand_in.is_valid_syntax = _is_valid_syntax  # type: ignore[attr-defined]
        stand_in.__getattr__ = _attribute  # type: ignore[method-assign]
        sys.modules[NAME] = stand_in


def _real() -> types.ModuleType:
    """The real module, loaded (in the stand-in's place) on the first use."""
    with _lock:
        module = sys.modules.get(NAME)
        if module is None or getattr(module, "is_valid_syntax", None) is _is_valid_syntax:
            sys.modules.pop(NAME, None)
            module = importlib.import_module(NAME)
        return module


def _is_valid_syntax(rule: str, value: str) -> bool:
    """rfc3987_syntax.is_valid_syntax, as jsonschema's `iri` format checks call it."""
    return bool(_real().is_valid_syntax(rule, value))


def _attribute(name: str) -> Any:
    """Any other name of the module: the real one's (the import system's dunders are not)."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_real(), name)
