"""Run code in a namespace the way a cell does: stdout, the last expression's value, any exception.

Plain Python (ast + exec), so it works in any namespace; the notebook calls it on
the kernel thread with the user's namespace. Output is kept up to a cap as it is
written, so a print loop cannot fill the memory.
"""

from __future__ import annotations

import ast
import contextlib
import io
import traceback
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from ollie_nb.redaction import redact
from ollie_nb.tools._pyvars import HIDDEN, cut, names_secret

OUTPUT_CAP = 20_000  # characters of stdout/stderr kept per run
VALUE_CHARS = 2_000  # characters of the last expression's repr
TRACEBACK_CHARS = 4_000
# Characters past a cap that redaction reads before the cut: a key the cut would halve is
# found whole and hidden, not left as a head no pattern knows (python_vars does the same).
REDACT_MARGIN = 256
FILENAME = "<python_exec>"


class BoundedWriter(io.TextIOBase):
    """A text stream that keeps the first `cap` characters (and REDACT_MARGIN more, for
    redaction to read) and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.kept = self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.cap + REDACT_MARGIN - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def getvalue(self) -> str:
        """The output, secret-looking values hidden, then cut to the cap."""
        text, total = redact("".join(self.parts)), self.kept + self.dropped
        if total <= self.cap:
            return text
        return text[: self.cap] + f"\n[... {total - self.cap} more characters of output cut]"


@dataclass
class CodeRun:
    """What a run produced: the output, the last expression's value, the error text."""

    output: str = ""
    value: Any = None
    has_value: bool = False
    error: str = ""
    hidden: bool = False  # the expression names a secret (`api_key`, `cfg.token`): no value shown

    def text(self) -> str:
        """The run as the model reads it: output, then `value:` / `error:` sections."""
        parts = [self.output.rstrip()] if self.output.strip() else []
        if self.has_value:
            parts.append("value: " + (HIDDEN if self.hidden else value_repr(self.value)))
        if self.error:
            parts.append(self.error)
        return "\n".join(parts) or "done (no output)"


def run_code(code: str, namespace: dict[str, Any], cap: int = OUTPUT_CAP) -> CodeRun:
    """Execute `code` in `namespace`; a last expression's value is kept, as in a cell.

    Exceptions become `CodeRun.error` with their traceback; KeyboardInterrupt and
    SystemExit propagate (an interrupt stops the run for real).
    """
    run = CodeRun()
    try:
        tree = ast.parse(code, FILENAME, "exec")
    except SyntaxError as exc:
        run.error = error_text(type(exc), exc, None)
        return run
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    writer = BoundedWriter(cap)
    try:
        with contextlib.redirect_stdout(writer), contextlib.redirect_stderr(writer):
            exec(compile(tree, FILENAME, "exec"), namespace)  # the tool runs code on purpose
            if last is not None:
                assert isinstance(last, ast.Expr)  # popped only when it is one
                expression = ast.Expression(last.value)
                run.value = eval(compile(expression, FILENAME, "eval"), namespace)
                run.has_value = run.value is not None
                run.hidden = names_secret(last.value)
    except Exception as exc:
        run.error = error_text(type(exc), exc, exc.__traceback__, skip=1)
    run.output = writer.getvalue()
    return run


def value_repr(value: Any) -> str:
    """The value's repr, secret-looking values hidden before the cut (no half key is left)."""
    try:
        text = repr(value)
    except Exception as exc:
        return f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    shown = redact(text[: VALUE_CHARS + REDACT_MARGIN])
    return (
        shown if len(text) <= VALUE_CHARS else f"{shown[:VALUE_CHARS]}... ({len(text)} characters)"
    )


def error_text(
    kind: type[BaseException] | None,
    value: BaseException | None,
    tb: TracebackType | None,
    skip: int = 0,
) -> str:
    """`error: Type: message` and the traceback (without `skip` outer frames), cut to a bound;
    secret-looking values (a token in a URL, a key in a source line) are hidden first."""
    if kind is None or value is None:
        return ""
    for _ in range(skip):
        tb = tb.tb_next if tb is not None else None
    message = str(value)
    head = f"error: {kind.__name__}" + (f": {message}" if message else "")
    lines = traceback.format_exception(kind, value, tb)
    return cut(redact(head + "\n" + "".join(lines).rstrip()), TRACEBACK_CHARS)
