"""What the notebook shows for an exception that reaches a magic: whose mistake it is.

- a usage-like kind (`ollie_nb.errors.OllieUsageError`): one UsageError line;
- a service's failure (`ollie_nb.errors.ServiceError`: the chat provider, the task
  server): one line naming the service and what to do, traceback kept;
- an exception raised by the user's own code (a chat backend, plan backend or tool
  defined in the notebook or in their own modules): shown as theirs, traceback kept;
- anything else from ollie_nb: a bug, shown with its type; `%ollie debug` has the traceback.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from IPython.core.error import UsageError

from ollie_nb.errors import OllieUsageError, ServiceError
from ollie_nb.notebook._display import NoticeView

_PACKAGE = str(Path(__file__).parents[1]) + os.sep  # the ollie_nb directory
_last: list[Failure] = []  # the latest failure that was not a usage mistake


@dataclass(frozen=True)
class Failure:
    """A traceback kept for `%ollie debug`, and whose code raised it."""

    traceback: str
    users: bool  # raised by the user's own code, not by ollie_nb
    source: str = ""  # the service whose failure it is (ServiceError.source), if one's


def one_line(exc: BaseException) -> str:
    """The first line of the message, or the type's name when there is none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def usage_error(exc: BaseException, prog: str = "%ollie") -> UsageError | None:
    """The UsageError to raise for a usage-like exception; None when it is not one."""
    if isinstance(exc, UsageError):
        return exc
    if isinstance(exc, OllieUsageError):
        return UsageError(f"{prog}: {one_line(exc)}")
    return None


def remember(exc: BaseException, redact: Callable[[str], str] = str) -> str | None:
    """Keep the traceback for `%ollie debug`; the user's function that raised, if theirs.

    The traceback is kept redacted (`redact`): a provider error can quote the header that
    carried the key."""
    text = redact("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    where = raised_in_users_code(exc.__traceback__)
    source = exc.source if isinstance(exc, ServiceError) else ""
    _last[:] = [Failure(text, where is not None, source)]
    return where


def failure_notice(exc: BaseException, redact: Callable[[str], str] = str) -> NoticeView:
    """Keep the traceback for `%ollie debug`; the notice that says whose code failed (both
    redacted)."""
    where = remember(exc, redact)
    first = redact(str(exc)).strip().splitlines()
    detail = f": {first[0]}" if first else ""
    if isinstance(exc, ServiceError):
        return NoticeView(f"{exc.source} failed{detail} (not a bug: {exc.advice})", "error")
    if where is not None:
        return NoticeView(
            f"your code raised {type(exc).__name__}{detail} (in {where}; "
            "%ollie debug shows the traceback)",
            "error",
        )
    return NoticeView(
        f"internal error {type(exc).__name__}{detail} (a bug, not your input: "
        "%ollie debug shows the traceback)",
        "error",
    )


def last_failure() -> Failure | None:
    """The latest failure shown in this kernel, if any."""
    return _last[0] if _last else None


def raised_in_users_code(tb: TracebackType | None) -> str | None:
    """The user's function that raised (`name()`), or None when ollie_nb's code raised.

    The innermost frame that is either ollie_nb's or the user's decides: a frame of the
    standard library or an installed package (json, httpx, ...) raises on behalf of
    whoever called it.
    """
    owner: str | None = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if _is_package(code.co_filename):
            owner = None
        elif _is_users(code.co_filename):
            owner = f"{code.co_name}()"
        tb = tb.tb_next
    return owner


def _is_package(filename: str) -> bool:
    return filename.startswith(_PACKAGE)


def _is_users(filename: str) -> bool:
    """A notebook cell, or a file outside the Python installation and its packages."""
    if filename.startswith("<"):
        return not filename.startswith("<frozen")
    return not filename.startswith(_library_dirs())


@functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    import sysconfig  # on the first failure: sysconfig costs %load_ext a few milliseconds

    paths = sysconfig.get_paths()
    found = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    found |= {sys.prefix, sys.base_prefix, sys.exec_prefix}
    return tuple(sorted(found))
