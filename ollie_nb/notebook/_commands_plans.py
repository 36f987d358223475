"""`%ollie` commands about plans and the work queue: plan, plans, tasks, queue, run, watch, stop."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from IPython.core.error import UsageError

from ollie_nb.notebook._commands import TASK_STATUSES, command, words_of
from ollie_nb.notebook._display import Displayable, Notice, Table, TextBlock, plural


class ArgParser(argparse.ArgumentParser):
    """argparse that raises UsageError (one red line) instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"%ollie {self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise UsageError(message or f"%ollie {self.prog}: bad arguments")


def parse_args(parser: ArgParser, rest: str) -> argparse.Namespace:
    try:
        return parser.parse_args(shlex.split(rest))
    except ValueError as exc:
        raise UsageError(f"%ollie {parser.prog}: {exc}") from None


@command(
    "plan [N|ID|GOAL WORDS] [--watch S]",
    "graph of the latest (or a given) plan with live step status",
    words=("--watch",),
)
def cmd_plan(m: Any, rest: str) -> Any:
    from ollie_nb.notebook._plans import PlanGraphView

    parser = ArgParser(prog="plan", add_help=False)
    parser.add_argument("key", nargs="*")
    parser.add_argument("--watch", type=float, metavar="SECONDS")
    args = parse_args(parser, rest)
    key = " ".join(args.key)
    runtime = m.runtime()
    record = m.on_loop(lambda core: core.find_plan(key))
    if record is None:
        what = f"plan {key!r}" if key else "plan yet"
        raise UsageError(f"%ollie plan: no {what}; ask for something with several steps")
    statuses = m.core_call(lambda core: core.plan_statuses(record))
    view = PlanGraphView(record, statuses, rankdir=m.rankdir)
    if args.watch:
        from ollie_nb.notebook._widgets import watch_plan

        return watch_plan(m, runtime, view, args.watch)
    return view


@command("plans", "every plan of this session, with its state from its steps")
def cmd_plans(m: Any, rest: str) -> Displayable:
    words_of(rest, "plans", most=0, usage="plans")

    async def rows(core: Any) -> list[tuple[Any, ...]]:
        found = []
        for p in core.plans:
            state = plan_state(p, await core.plan_statuses(p))
            found.append((p.number, p.goal[:60], len(p.steps), p.backend or "in context", state))
        return found

    return Table(
        "plans",
        ["#", "goal", "steps", "backend", "state"],
        m.core_call(rows),
        empty="(no plans yet)",
    )


def plan_state(record: Any, statuses: dict[str, str]) -> str:
    """A plan's state, from its steps' states: done, failed, N of M done, or where it lives."""
    from ollie_nb.planning import read_state

    if record.warning:
        return "warning"
    if record.kind == "context":
        return "in context"
    known = [read_state(statuses.get(i)) for i in record.ids]
    done = sum(1 for s in known if s.is_finished)
    if any(s.is_failed for s in known):
        return f"failed ({done} of {len(known)} done)"
    if known and done == len(known):
        return "done"
    if done or any(s.is_active for s in known):
        return f"{done} of {len(known)} done"
    return "queued" if record.kind == "queue" else "persisted"


@command(
    "tasks [STATUS]", "the task server's tasks (open, ready, all, done, ...)", words=TASK_STATUSES
)
def cmd_tasks(m: Any, rest: str) -> Displayable:
    words = words_of(rest, "tasks", most=1, usage="tasks [STATUS]")
    client = m.on_loop(lambda core: core.env.task_client if core.env else None)
    if client is None:
        raise UsageError("%ollie tasks: no task server is wired (see %ollie mcp)")
    status = words[0] if words else "all"
    result = m.core_call(lambda core: client.list(status))
    if result.is_error:
        return Notice(result.text, "error")
    return TextBlock(result.text, title=f"tasks on '{client.server}' ({status})")


@command(
    "queue [clear|pop]",
    "queued prompts, drop them, or take the next one off",
    words=("clear", "pop"),
)
def cmd_queue(m: Any, rest: str) -> Displayable:
    words = words_of(rest, "queue", most=1, usage="queue [clear|pop]")
    if words == ["clear"]:
        cleared = m.on_loop(lambda core: core.clear_queue())
        return Notice(f"cleared {plural(cleared, 'queued prompt')}")
    if words == ["pop"]:
        taken = m.on_loop(lambda core: core.pop_queue())
        if taken is None:
            return Notice("the queue is empty")
        return TextBlock(taken.text, title="taken off the queue (it will not run):")
    if words:
        raise UsageError(
            "%ollie queue: use '%ollie queue', '%ollie queue clear' or '%ollie queue pop'"
        )
    items = m.on_loop(lambda core: core.queue_items)
    rows = [(i + 1, _first_line(item.text)[:80]) for i, item in enumerate(items)]
    return Table("queue", ["#", "prompt"], rows, empty="(the queue is empty)")


@command(
    "run [--bg] [--parallel [N]]",
    "work the queued prompts now (one turn each), or the latest plan in N sub-agents",
    words=("--bg", "--parallel"),
)
def cmd_run(m: Any, rest: str) -> Any:
    parser = ArgParser(prog="run", add_help=False)
    parser.add_argument("--bg", action="store_true")
    parser.add_argument("--parallel", nargs="?", type=int, const=0, default=None, metavar="N")
    args = parse_args(parser, rest)
    runtime = m.runtime()
    if args.parallel is not None:
        from ollie_nb.notebook._parallel_widget import run_parallel

        if args.parallel < 0:
            raise UsageError("%ollie run --parallel: N must be 1 or more")
        if runtime.busy:
            return Notice("a turn is running; start the parallel run when it ends")
        return run_parallel(m, args.parallel, args.bg)  # 0: the agent's limit
    if runtime.busy:
        return Notice("a turn is running; the queue is worked when it ends")

    prompt = m.core_call(lambda core: core.next_prompt())
    if prompt is None:
        return Notice("the queue is empty")
    if args.bg:
        from ollie_nb.notebook._widgets import start_background_turn

        return start_background_turn(m, runtime, prompt)
    return m.foreground(runtime, prompt)


@command(
    "watch [on|off] [--interval S]",
    "the agent works each step of its plans that becomes ready or is assigned to it",
    words=("on", "off", "--interval"),
)
def cmd_watch(m: Any, rest: str) -> Any:
    parser = ArgParser(prog="watch", add_help=False)
    parser.add_argument("action", nargs="?", choices=["on", "off"])
    parser.add_argument("--interval", type=float, default=None, metavar="SECONDS")
    args = parse_args(parser, rest)
    if args.action == "on":
        from ollie_nb.notebook._watch_widget import start_watch_view

        interval = m.watch_interval if args.interval is None else args.interval
        return start_watch_view(m, m.runtime(), interval)
    if args.action == "off":
        m.core_call(lambda core: core.stop_watching())
        return Notice("stopped watching task events")
    watcher, queued = m.on_loop(lambda core: (core.watcher, len(core.queued)))
    if watcher is None:
        return Notice("not watching task events (%ollie watch on)")
    log = "\n".join(watcher.log) or "(nothing yet)"
    return TextBlock(log, title=f"watching '{watcher.server}' ({watcher.mode}); {queued} queued")


@command(
    "stop",
    "interrupt the running turn, a parallel run and every sub-agent; the queue waits for the next prompt or %ollie run",
)
def cmd_stop(m: Any, rest: str) -> Displayable:
    words_of(rest, "stop", most=0, usage="stop")
    runtime = m.runtime()
    children = m.on_loop(lambda core: len(core.subagents.running) + core.parallel_running)
    if not runtime.busy and not children:
        return Notice("nothing is running")
    runtime.interrupt()
    return Notice("stopping the running turn and every sub-agent")


@command("subagents", "the sub-agents of this agent: state, step, turns, last reply")
def cmd_subagents(m: Any, rest: str) -> Displayable:
    words_of(rest, "subagents", most=0, usage="subagents")
    infos = m.on_loop(lambda core: core.subagents.infos())
    rows = [(i.name, i.status, i.step[:40], i.turns, i.reply[:60]) for i in infos]
    return Table(
        "sub-agents",
        ["name", "state", "step", "turns", "last reply"],
        rows,
        empty="(no sub-agents yet)",
    )


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""
