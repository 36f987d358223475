"""The headless worker's command line: `ollie-work` and `python -m ollie_nb work`.

The program above the core: it parses the options, builds an AgentCore without a notebook
and hands it to `Worker` (ollie_nb/core/_worker.py, where the worker's logic lives),
stopping it on SIGINT / SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence

from ollie_nb.core import AgentCore
from ollie_nb.core._terminal import terminal_safe
from ollie_nb.core._worker import DEFAULT_ASK_TIMEOUT, Worker, WorkOptions
from ollie_nb.errors import OllieError

__all__ = ["main", "parser", "work"]

MAX_ASK_TIMEOUT = 7 * 24 * 3600.0  # the longest an inbox request stays open (a week)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ollie-work",
        description="Work the ready steps of the plans in the agent's task store, headless.",
    )
    p.add_argument("--agent", required=True, help="the agent JSON file (or an agent's name)")
    p.add_argument(
        "--plan",
        action="append",
        default=[],
        help="work this goal's steps (a task id; repeatable); default: the approved plans",
    )
    p.add_argument(
        "--all",
        action="store_true",
        dest="every",
        help="work every plan in the store, approved for work or not",
    )
    p.add_argument(
        "--approved-by",
        action="append",
        default=[],
        metavar="NAME",
        help="work only the plans whose approval mark this user set over HTTP (repeatable)",
    )
    p.add_argument(
        "--ask",
        action="store_true",
        help="park a call that needs approval, or a request at a reached spend cap, in the "
        "task store's inbox and wait for an answer (default: refuse it, stop at the cap)",
    )
    p.add_argument(
        "--ask-timeout",
        type=float,
        default=DEFAULT_ASK_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for an answer; unanswered = denied, or stopped at a cap (default {DEFAULT_ASK_TIMEOUT:g})",
    )
    p.add_argument(
        "--answers-from",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="with --ask: take only the answers these users gave (repeatable)",
    )
    p.add_argument("--parallel", type=int, default=1, help="steps worked at once (default 1)")
    p.add_argument("--name", default="", help="the worker's name in claims (default host-pid)")
    p.add_argument(
        "--debug", action="store_true", help="show the traceback of an unexpected failure"
    )
    p.add_argument(
        "--until-idle",
        action="store_true",
        help="exit when no step is ready or held with a lease: 0, or 1 if a step failed "
        "(default: keep watching the store)",
    )
    return p


def default_name() -> str:
    return f"worker-{socket.gethostname()}-{os.getpid()}"


async def work(options: WorkOptions, log: Callable[[str], None]) -> int:
    """Run one worker until idle or stopped (SIGINT / SIGTERM hand its steps back)."""
    name = options.name or default_name()
    core = AgentCore(agent=options.agent, name=name, autosave=False, execute=False)
    worker = Worker(core, options, log)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, worker.stop, sig.name)
    try:
        async with core:
            log(terminal_safe(f"{name}: working {options.what}"))
            return await worker.run()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


def main(argv: Sequence[str] | None = None) -> int:
    options_ns = parser().parse_args(argv)
    if options_ns.parallel < 1:
        parser().error("--parallel must be at least 1")
    if options_ns.plan and options_ns.every:
        parser().error("--plan and --all: name plans, or work them all")
    if options_ns.approved_by and (options_ns.every or options_ns.plan):
        parser().error("--approved-by picks among the approved plans: not with --all or --plan")
    if not 0 < options_ns.ask_timeout <= MAX_ASK_TIMEOUT:
        parser().error(f"--ask-timeout must be between 1 and {MAX_ASK_TIMEOUT:g} seconds")
    if options_ns.answers_from and not options_ns.ask:
        parser().error("--answers-from limits the answers of --ask: give --ask too")
    answers_from = tuple(n.strip() for names in options_ns.answers_from for n in names.split(","))
    options = WorkOptions(
        options_ns.agent,
        tuple(options_ns.plan),
        options_ns.parallel,
        options_ns.name,
        options_ns.until_idle,
        options_ns.every,
        tuple(options_ns.approved_by),
        options_ns.ask,
        options_ns.ask_timeout,
        tuple(n for n in answers_from if n),
    )

    def log(line: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)

    try:
        return asyncio.run(work(options, log))
    except OllieError as exc:
        print(f"ollie-work: {terminal_safe(str(exc))}", file=sys.stderr)
        return 1
    except Exception as exc:  # a library's failure (a task group's, a connection's): one line
        if options_ns.debug:
            raise
        leaf = innermost(exc)
        what = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        print(
            f"ollie-work: stopped by an unexpected failure: {terminal_safe(what)} "
            "(--debug shows the traceback)",
            file=sys.stderr,
        )
        return 1


def innermost(exc: BaseException) -> BaseException:
    """The first failure inside nested exception groups (anyio and the MCP SDK wrap theirs)."""
    while isinstance(inner := getattr(exc, "exceptions", None), tuple) and inner:
        exc = inner[0]
    return exc
