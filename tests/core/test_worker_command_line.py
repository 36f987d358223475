"""`ollie-work`'s command line: a failure from a library (a task group's nested
exception group around a connection error) is one line and exit 1, not a traceback;
`--debug` shows the traceback."""

from __future__ import annotations

import sys

import pytest

from ollie_nb import work

if sys.version_info < (3, 11):  # the backport, on Python 3.10
    from exceptiongroup import ExceptionGroup


class ConnectError(Exception):
    """Shaped like httpx's: what the MCP SDK's task group wraps."""


async def _fails(options, log):
    raise ExceptionGroup(
        "unhandled errors in a TaskGroup",
        [ExceptionGroup("inner", [ConnectError("All connection attempts failed")])],
    )


def test_a_wrapped_library_failure_is_one_line_and_exit_1(monkeypatch, capsys):
    monkeypatch.setattr(work, "work", _fails)
    code = work.main(["--agent", "a.json", "--until-idle"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().splitlines() == [
        "ollie-work: stopped by an unexpected failure: ConnectError: All connection attempts "
        "failed (--debug shows the traceback)"
    ]


def test_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setattr(work, "work", _fails)
    with pytest.raises(ExceptionGroup):
        work.main(["--agent", "a.json", "--debug"])
