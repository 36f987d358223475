"""`%ollie` commands about plans and the work queue: plan, plans, tasks, queue, run, watch, stop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ollie_nb.errors import TaskServerError  # the planning package loads with the first agent
from ollie_nb.notebook._context import CommandContext
from ollie_nb.notebook._display import Displayable, Group, NoticeView, Table, TextBlock, plural
from ollie_nb.notebook.commands._args import (
    TASK_STATUSES,
    CommandParser,
    at_least_one,
    seconds,
    words_of,
)
from ollie_nb.notebook.commands._registry import COMMANDS

if TYPE_CHECKING:
    from ollie_nb.core import AgentCore
    from ollie_nb.planning import PlanRecord, StepState

command = COMMANDS.command


REVIEW_WORDS = ("show", "edit", "approve", "reject", "discard", "retry")


@command(
    "plan [N|ID|GOAL WORDS] [--watch S] [--full]",
    "graph of the latest (or a given) plan with live step status (--full: every step of a "
    "large plan, not collapsed); "
    "plan show|edit|approve|reject|discard N: review a plan (see docs/PLANS.md); "
    "plan retry N STEP: reopen a failed step and the steps waiting on it",
    words=("--watch", "--full", *REVIEW_WORDS),
)
def cmd_plan(ctx: CommandContext, rest: str) -> Any:
    # The plan views and widgets load the planning layer and ipywidgets: on first use.
    from ollie_nb.notebook._plans import PlanGraphView
    from ollie_nb.notebook._widgets import PlanWatch

    first, _, after = rest.partition(" ")
    if first in REVIEW_WORDS:
        return REVIEW[first](ctx, after.split())
    parser = CommandParser("plan")
    parser.add_argument("key", nargs="*")
    parser.add_argument("--watch", type=seconds, metavar="SECONDS")
    parser.add_argument("--full", action="store_true")
    args = parser.parse(rest)
    key = " ".join(args.key)
    record = ctx.on_loop(lambda core: core.plans.find(key))
    if record is None:
        what = f"plan {key!r}" if key else "plan yet"
        raise UsageError(f"%ollie plan: no {what}; ask for something with several steps")
    statuses = ctx.core_call(lambda core: core.plans.statuses(record))
    spend = ctx.on_loop(lambda core: core.spend.steps(record.number))
    rankdir = ctx.settings().rankdir
    view = PlanGraphView(record, statuses, rankdir=rankdir, spend=spend, expand=args.full)
    if args.watch is not None:
        return PlanWatch(ctx.runtime(), view, args.watch)
    return view


@command("plans", "every plan of this session, with its state and what its steps used")
def cmd_plans(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "plans", most=0, usage="plans")

    async def rows(core: AgentCore) -> list[tuple[Any, ...]]:
        found = []
        for p in core.plans:
            state = plan_state(p, await core.plans.statuses(p))
            worked = core.spend.steps(p.number)  # what its worked steps used, all together
            spent = str(core.spend.plan_total(p.number)) if worked else ""
            where = p.backend or "in context"
            found.append((p.number, p.goal[:60], len(p.steps), where, state, spent))
        return found

    return Table(
        "plans",
        ["#", "goal", "steps", "backend", "state", "spent"],
        ctx.core_call(rows),
        empty="(no plans yet)",
    )


def plan_state(record: Any, statuses: dict[str, StepState]) -> str:
    """A plan's state, from its steps' states: done, failed, N of M done, or where it lives;
    a plan in review: held for review, sent back or discarded."""
    from ollie_nb.planning import Review, StepState

    in_review = {
        Review.HELD: "held for review",
        Review.REJECTED: "sent back",
        Review.DISCARDED: "discarded",
    }.get(record.review)
    if in_review:
        return in_review
    if record.warning:
        return "warning"
    if record.kind == "context":
        return "in context"
    known = [statuses.get(i, StepState.UNKNOWN) for i in record.ids]
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
def cmd_tasks(ctx: CommandContext, rest: str) -> Displayable:
    words = words_of(rest, "tasks", most=1, usage="tasks [STATUS]")
    status = words[0] if words else "all"

    async def listing(core: AgentCore) -> tuple[str, str | TaskServerError]:
        env = core.servers
        if env is None or env.task_client is None:
            raise UsageError("%ollie tasks: no task server is wired (see %ollie mcp)")
        try:
            return env.task_client.server, await env.task_client.listing(status)
        except TaskServerError as exc:
            return env.task_client.server, exc

    server, answer = ctx.core_call(listing)
    if isinstance(answer, TaskServerError):
        return NoticeView(str(answer), "error")
    return TextBlock(answer, title=f"tasks on '{server}' ({status})")


@command(
    "queue [clear|pop]",
    "queued prompts, drop them, or take the next one off",
    words=("clear", "pop"),
)
def cmd_queue(ctx: CommandContext, rest: str) -> Displayable:
    words = words_of(rest, "queue", most=1, usage="queue [clear|pop]")
    if words == ["clear"]:
        cleared = ctx.on_loop(lambda core: core.prompts.clear())
        return NoticeView(f"cleared {plural(cleared, 'queued prompt')}")
    if words == ["pop"]:
        taken = ctx.on_loop(lambda core: core.prompts.pop())
        if taken is None:
            return NoticeView("the queue is empty")
        return TextBlock(taken.text, title="taken off the queue (it will not run):")
    if words:
        raise UsageError(
            "%ollie queue: use '%ollie queue', '%ollie queue clear' or '%ollie queue pop'"
        )
    items = ctx.on_loop(lambda core: core.prompts.items)
    rows = [(i + 1, _first_line(item.text)[:80]) for i, item in enumerate(items)]
    return Table("queue", ["#", "prompt"], rows, empty="(the queue is empty)")


@command(
    "run [--bg] [--parallel [N]] [--ask]",
    "work the queued prompts now (one turn each), or the latest plan in N sub-agents; "
    "--ask: a reached spend cap pauses and asks the task store's inbox",
    words=("--bg", "--parallel", "--ask"),
)
def cmd_run(ctx: CommandContext, rest: str) -> Any:
    parser = CommandParser("run")
    parser.add_argument("--bg", action="store_true")
    # `--parallel` alone is 0 (the agent's limit); a given N must be 1 or more
    parser.add_argument(
        "--parallel", nargs="?", type=at_least_one, const=0, default=None, metavar="N"
    )
    parser.add_argument("--ask", action="store_true")  # this run asks at caps
    args = parser.parse(rest)
    runtime = ctx.runtime()
    if args.parallel is not None:
        from ollie_nb.notebook._parallel_widget import run_parallel  # ipywidgets: on first use

        if runtime.busy:
            return NoticeView("a turn is running; start the parallel run when it ends")
        return run_parallel(ctx.settings(), runtime, args.parallel, args.bg, args.ask)
    if runtime.busy:
        return NoticeView("a turn is running; the queue is worked when it ends")

    prompt = ctx.core_call(lambda core: core.turns.next_prompt())
    if prompt is None:
        return NoticeView(empty_queue_text(ctx.on_loop(lambda core: list(core.plans))))
    if args.ask:  # asking is on until this run's turn ends
        ctx.on_loop(lambda core: core.cap_ask.hold())
    release = lambda *_: runtime.call_soon(runtime.core.cap_ask.release)  # noqa: E731
    if args.bg:
        from ollie_nb.notebook._widgets import BackgroundTurn  # ipywidgets: on first use

        turn = BackgroundTurn(ctx.settings(), runtime, prompt)
        if args.ask:
            turn.future.add_done_callback(release)
        return turn
    try:
        return ctx.foreground(runtime, prompt)
    finally:
        if args.ask:
            release()


def empty_queue_text(plans: list[PlanRecord]) -> str:
    """What `%ollie run` says with nothing queued: how to work the latest plan saved on a task
    server (its steps are there, not in the queue)."""
    saved = [r for r in plans if r.kind == "tasks" and r.persisted]
    if not saved:
        return "the queue is empty"
    return (
        f"the queue is empty; plan {saved[-1].number} is saved on the task server: work it with "
        "%ollie run --parallel, or %ollie watch on (the agent works each step as it becomes "
        "ready), or a worker (ollie-work --agent FILE)"
    )


@command(
    "watch [on|off] [--interval S]",
    "the agent works each step of its plans that becomes ready or is assigned to it",
    words=("on", "off", "--interval"),
)
def cmd_watch(ctx: CommandContext, rest: str) -> Any:
    parser = CommandParser("watch")
    parser.add_argument("action", nargs="?", choices=["on", "off"])
    parser.add_argument("--interval", type=seconds, default=None, metavar="SECONDS")
    args = parser.parse(rest)
    if args.action == "on":
        interval = ctx.watch_interval if args.interval is None else args.interval
        return _watch_on(ctx, interval)
    if args.action == "off":
        dropped = ctx.core_call(lambda core: core.watch.stop())
        if not dropped:
            return NoticeView("stopped watching task events")
        steps = plural(dropped, "step")
        return NoticeView(f"stopped watching task events; the {steps} it had queued left the queue")
    watcher, queued = ctx.on_loop(lambda core: (core.watch.watcher, len(core.prompts.texts)))
    if watcher is None:
        return NoticeView("not watching task events (%ollie watch on)")
    log = "\n".join(watcher.log) or "(nothing yet)"
    return TextBlock(log, title=f"watching '{watcher.server}' ({watcher.mode}); {queued} queued")


def _watch_on(ctx: CommandContext, interval: float) -> Any:
    """Turn the watch on with a widget as its sink; return the widget (the cell ends at once)."""
    from ollie_nb.notebook._watch_widget import WatchView  # ipywidgets: on first use

    view = WatchView(ctx.settings(), ctx.runtime())
    watcher = ctx.core_call(lambda core: core.watch.start(interval, on_event=view.post, wake=True))
    view.begin(watcher.server, watcher.mode)
    return view


@command(
    "stop",
    "interrupt the running turn, a parallel run and every sub-agent; the queue waits for the next prompt or %ollie run",
)
def cmd_stop(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "stop", most=0, usage="stop")
    runtime = ctx.runtime()
    children = ctx.on_loop(lambda core: len(core.subagents.running) + core.runs.running)
    if not runtime.busy and not children:
        return NoticeView("nothing is running")
    runtime.interrupt()
    return NoticeView("stopping the running turn and every sub-agent")


@command("subagents", "the sub-agents of this agent: state, step, turns, last reply")
def cmd_subagents(ctx: CommandContext, rest: str) -> Displayable:
    words_of(rest, "subagents", most=0, usage="subagents")
    infos = ctx.on_loop(lambda core: core.subagents.infos())
    rows = [(i.name, i.status, i.step[:40], i.turns, i.reply[:60]) for i in infos]
    return Table(
        "sub-agents",
        ["name", "state", "step", "turns", "last reply"],
        rows,
        empty="(no sub-agents yet)",
    )


# -- plan review: show, edit, approve, reject, discard ----------------------------------------


def _number(word: str, sub: str) -> int:
    if not word.isdigit():
        raise UsageError(f"%ollie plan {sub}: {word!r} is not a plan number (see %ollie plans)")
    return int(word)


def _held_number(ctx: CommandContext, words: list[str], sub: str) -> int:
    """The plan number the words give, else the one plan held for review."""
    if words and words[0].isdigit():
        return int(words.pop(0))
    held = ctx.on_loop(lambda core: [r.number for r in core.plans.held()])
    if len(held) == 1:
        return held[0]
    if not held:
        raise UsageError(f"%ollie plan {sub}: no plan is held for review")
    numbers = ", ".join(str(n) for n in held)
    raise UsageError(f"%ollie plan {sub}: plans {numbers} are held; give the plan's number")


def _latest_number(ctx: CommandContext, words: list[str], sub: str) -> int:
    if words:
        return _number(words[0], sub)
    record = ctx.on_loop(lambda core: core.plans.find())
    if record is None:
        raise UsageError(f"%ollie plan {sub}: no plan yet; ask for something with several steps")
    return int(record.number)


def _no_run(words: list[str], sub: str, usage: str) -> bool:
    no_run = bool(words) and words[0] == "--no-run"
    if no_run:
        words.pop(0)
    if any(w.startswith("--") for w in words[:1]):
        raise UsageError(f"%ollie plan {sub}: unknown option {words[0]}; usage: {usage}")
    return no_run


def _plan_show(ctx: CommandContext, words: list[str]) -> Any:
    from ollie_nb.notebook._plans import PlanShow  # the planning layer: on first use

    _at_most(words, 1, "show", "plan show [N]")
    number = _latest_number(ctx, words, "show")

    async def found(core: AgentCore) -> tuple[Any, Any, dict[str, StepState]]:
        record = core.plans.record(number)
        draft = core.plans.draft(number) if record.held else None
        return record, draft, await core.plans.statuses(record)

    record, draft, statuses = ctx.core_call(found)
    return PlanShow(record, draft, statuses, rankdir=ctx.settings().rankdir)


def plan_editor(ctx: CommandContext, words: list[str]) -> Any:
    """`%ollie plan edit [N]`: the plan in the editor (a held plan's review, a saved plan's edits)."""
    from ollie_nb.notebook._plan_editor import plan_editor as editor_of  # ipywidgets: on use
    from ollie_nb.notebook._widgets import review_turn

    _at_most(words, 1, "edit", "plan edit [N]")
    number = _latest_number(ctx, words, "edit")

    async def found(core: AgentCore) -> tuple[Any, Any, dict[str, StepState]]:
        record = core.plans.record(number)
        return record, core.plans.draft(number), await core.plans.statuses(record)

    record, draft, statuses = ctx.core_call(found)
    runtime, settings = ctx.runtime(), ctx.settings()
    follow = lambda: review_turn(runtime, settings, number)  # noqa: E731
    return editor_of(runtime, record, draft, statuses, settings.rankdir, follow)


def _plan_approve(ctx: CommandContext, words: list[str]) -> Any:
    usage = "plan approve [N] [--no-run]"
    number = _held_number(ctx, words, "approve")
    no_run = _no_run(words, "approve", usage)
    _at_most(words, 0, "approve", usage)
    record = ctx.core_call(lambda core: core.plans.approve(number))
    where = record.backend or "the conversation (no plan backend)"
    done = NoticeView(f"plan {number} approved and saved on {where}")
    if record.warning:
        done = NoticeView(
            f"plan {number} approved; {record.warning.removeprefix('warning: ')}", "warning"
        )
    return _then_run(ctx, number, done, no_run, "the approval")


def _plan_reject(ctx: CommandContext, words: list[str]) -> Any:
    usage = "plan reject N [--no-run] REASON..."
    if not words:
        raise UsageError(f"%ollie plan reject: usage: {usage}")
    number = _number(words.pop(0), "reject")
    no_run = _no_run(words, "reject", usage)
    reason = " ".join(words)
    ctx.on_loop(lambda core: core.plans.reject(number, reason))
    done = NoticeView(f"plan {number} sent back for changes")
    return _then_run(ctx, number, done, no_run, "the request for changes")


def _plan_discard(ctx: CommandContext, words: list[str]) -> Any:
    number = _held_number(ctx, words, "discard")
    _at_most(words, 0, "discard", "plan discard [N]")
    ctx.on_loop(lambda core: core.plans.discard(number))
    return NoticeView(
        f"plan {number} discarded: nothing was saved; the agent is told at its next turn"
    )


def _plan_retry(ctx: CommandContext, words: list[str]) -> Displayable:
    usage = "plan retry N STEP"
    if len(words) != 2:
        raise UsageError(f"%ollie plan retry: usage: {usage} (STEP: its id or number)")
    number = _number(words[0], "retry")
    step = words[1]
    reopened = ctx.core_call(lambda core: core.plans.retry(number, step))
    return NoticeView(
        f"plan {number}: reopened {', '.join(reopened)}; they go to whoever serves the plan"
    )


def _then_run(ctx: CommandContext, number: int, done: NoticeView, no_run: bool, what: str) -> Any:
    """Run the prompt the review queued as this cell's turn, when the agent is idle."""
    from IPython.display import display

    runtime = ctx.runtime()
    if no_run:
        return Group(done, NoticeView(f"{what} is queued: %ollie run works it"))
    if runtime.busy:
        return Group(done, NoticeView(f"a turn is running; {what} is worked after it"))
    item = ctx.on_loop(lambda core: core.plans.take_prompt(number))
    if item is None:
        return done
    display(done)
    return ctx.foreground(runtime, item)


def _at_most(words: list[str], most: int, sub: str, usage: str) -> None:
    if len(words) > most:
        raise UsageError(f"%ollie plan {sub}: unexpected {' '.join(words[most:])}; usage: {usage}")


REVIEW = {
    "show": _plan_show,
    "edit": plan_editor,
    "approve": _plan_approve,
    "reject": _plan_reject,
    "discard": _plan_discard,
    "retry": _plan_retry,
}


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""
