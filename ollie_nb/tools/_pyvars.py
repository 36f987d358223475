"""Short summaries of a namespace's variables, for `python_vars`: type and a line about each value."""

from __future__ import annotations

import ast
import inspect
import reprlib
import types
from collections.abc import Mapping
from typing import Any

from ollie_nb.redaction import is_secret_name, redact

REPR_CHARS = 300  # characters of a value's repr in its summary
MAX_VARS = 200  # variables listed at most
HIDDEN = "(hidden: secret-looking name)"
NOISE = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})

_REPR = reprlib.Repr()  # bounded reprs of containers: a list of a million items is not walked
_REPR.maxstring = _REPR.maxother = REPR_CHARS
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 20
_REPR.maxlevel = 3


def is_listed(name: str, value: Any) -> bool:
    """Whether a namespace entry is a user variable: no private, module, function or class names."""
    if name.startswith("_") or name in NOISE:
        return False
    return not (
        isinstance(value, (types.ModuleType, type))
        or inspect.isroutine(value)
        or isinstance(value, types.FunctionType)
    )


def summarise(name: str, value: Any) -> str:
    """One line about `value`: shape/columns of frames, length of sized things, a cut repr;
    secret-looking values in it (key formats, values of secret-named keys) are hidden."""
    if is_secret_name(name):
        return HIDDEN
    try:
        return _describe(value)
    except Exception as exc:  # a broken __repr__ or property must not hide the others
        return f"(no summary: {type(exc).__name__})"


def names_secret(expression: ast.expr) -> bool:
    """Whether an expression reads a secret by name: `api_key`, `cfg.token`, `env["GH_PAT"]`."""
    if isinstance(expression, ast.Name):
        return is_secret_name(expression.id)
    if isinstance(expression, ast.Attribute):
        return is_secret_name(expression.attr)
    if isinstance(expression, ast.Subscript) and isinstance(expression.slice, ast.Constant):
        key = expression.slice.value
        return isinstance(key, str) and is_secret_name(key)
    return False


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    columns = getattr(value, "columns", None)
    if isinstance(shape, tuple) and columns is not None:
        names = [str(c) for c in list(columns)[:30]]
        more = f", ... ({len(columns)} in all)" if len(columns) > 30 else ""
        return f"shape {shape}, columns [{', '.join(names)}{more}]"
    if isinstance(shape, tuple):
        dtype = getattr(value, "dtype", None)
        return f"shape {shape}" + (f", dtype {dtype}" if dtype is not None else "")
    text = cut(redact(_REPR.repr(value)))  # hidden before the cut: no half key is left
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
        return f"len {len(value)}: {text}"
    return text


def cut(text: str, limit: int = REPR_CHARS) -> str:
    """`text` up to `limit` characters, with a marker when cut."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def list_vars(namespace: Mapping[str, Any]) -> str:
    """The namespace's user variables, one `name (type): summary` line each, sorted by name."""
    names = sorted(n for n, v in list(namespace.items()) if is_listed(n, v))
    lines = [
        f"{name} ({type(namespace[name]).__name__}): {summarise(name, namespace[name])}"
        for name in names[:MAX_VARS]
    ]
    if len(names) > MAX_VARS:
        lines.append(f"... and {len(names) - MAX_VARS} more variables")
    return "\n".join(lines) or "no user variables in the notebook yet"
