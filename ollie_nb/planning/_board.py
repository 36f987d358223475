"""The board's model: every plan of a task store, and for each claimed step who holds it.

Built from two reads of the store (planning/_client.py): a listing of its tasks (state,
assignee, lease end) and its event log, folded into a `ClaimLog` (when each claim began,
the lease it was granted, the leases that ran out). Pure: `board_of` takes the time `now`,
so a test sets the clock. Drawn as HTML by `board_html`; every title and holder is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from ollie_nb.planning._client import Task
from ollie_nb.planning._inbox import InboxRequest
from ollie_nb.planning._spend import Spend
from ollie_nb.planning._state import StepState
from ollie_nb.planning._types import PlanStep

CLAIMED, LEASE_EXPIRED = "claimed", "lease_expired"  # the event types the log folds


def epoch(stamp: str) -> float | None:
    """Seconds since the epoch of a store time (`2025-01-31T12:00:00.123Z`); None if none."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class ClaimSeen:
    """A claim the event log showed: its holder, when it began, the lease granted (0: none)."""

    holder: str
    since: float
    lease: float


@dataclass
class ClaimLog:
    """What the event log says of claims, by task id: the last claim, and leases that ran out
    (kept until the step is claimed again)."""

    claims: dict[str, ClaimSeen] = field(default_factory=dict)
    lapsed: dict[str, ClaimSeen] = field(default_factory=dict)  # the claim whose lease ran out
    seq: int = 0

    def fold(self, events: Iterable[Mapping[str, object]]) -> None:
        """Take in events of the log, oldest first."""
        for event in events:
            seq, task = event.get("seq"), str(event.get("task") or "")
            if isinstance(seq, int):
                self.seq = max(self.seq, seq)
            payload = event.get("payload")
            data = payload if isinstance(payload, Mapping) else {}
            when = epoch(str(event.get("time") or "")) or 0.0
            if event.get("type") == CLAIMED:
                lease = data.get("lease")
                seconds = float(lease) if isinstance(lease, (int, float)) else 0.0
                self.claims[task] = ClaimSeen(str(data.get("assignee") or ""), when, seconds)
                self.lapsed.pop(task, None)
            elif event.get("type") == LEASE_EXPIRED:
                seen = self.claims.pop(task, None)
                holder = str(data.get("assignee") or (seen.holder if seen else ""))
                self.lapsed[task] = ClaimSeen(holder, seen.since if seen else when, 0.0)


@dataclass(frozen=True)
class Holding:
    """A claimed step's figures (seconds; None where the store does not tell)."""

    holder: str
    running: float | None  # since the claim began
    lease_left: float | None  # until the lease ends (None: a claim without lease)
    heartbeat_age: float | None  # since the lease was last renewed (claim or heartbeat)
    lapsed: bool = False  # the lease ran out: the step is open again, nobody works it
    spend: Spend | None = None  # tokens and cost so far (its holder's heartbeat, or this kernel)
    last_tool: str | None = None  # the last tool it called, as its holder's heartbeat told


def holding_of(task: Task, log: ClaimLog, now: float, spend: Spend | None = None) -> Holding | None:
    """The figures of `task`'s claim, or of its lapsed one; None when it is neither. Its
    spend and last tool are what the holder's heartbeat told (`spend`, where given, first)."""
    held, told = _claim_figures(task, log, now, spend), task.progress
    if held is None or told is None:
        return held
    known = spend if spend is not None else told.spend
    return replace(held, spend=known, last_tool=told.last_tool)


def _claim_figures(task: Task, log: ClaimLog, now: float, spend: Spend | None) -> Holding | None:
    """Who holds `task` (or held it till its lease ran out), for how long, its lease's time."""
    seen = log.claims.get(task.id)
    if task.state.is_active:
        until = epoch(task.lease_until)
        left = None if until is None else until - now
        if left is not None and left <= 0:  # ran out; the store reopens it at its next write
            return Holding(task.assignee, _since(seen, now), 0.0, None, True, spend)
        beat = None
        if until is not None and seen is not None and seen.lease > 0:
            beat = max(0.0, now - (until - seen.lease))
        return Holding(task.assignee, _since(seen, now), left, beat, False, spend)
    lapsed = log.lapsed.get(task.id)
    if lapsed is not None and task.state.is_open:
        return Holding(lapsed.holder, None, 0.0, None, True, spend)
    return None


def _since(seen: ClaimSeen | None, now: float) -> float | None:
    return None if seen is None else max(0.0, now - seen.since)


@dataclass(frozen=True)
class BoardFilter:
    """Which plans and steps the board shows: one goal, a holder prefix (`--mine`), states."""

    goal: str = ""
    mine: str = ""  # a holder's prefix (this kernel's agents) or an HTTP user's name
    states: frozenset[StepState] = frozenset()

    def holds(self, holder: str) -> bool:
        """Whether `mine` takes the holder: itself, or one of its agents (`mine@...`, `mine/...`)."""
        if not self.mine or holder == self.mine:
            return True
        return holder.startswith((f"{self.mine}@", f"{self.mine}/"))


@dataclass(frozen=True)
class BoardPlan:
    """One plan on the board: its goal, steps (store order), and each step's holding."""

    goal: Task
    steps: tuple[Task, ...]
    holdings: Mapping[str, Holding]

    @property
    def plan_steps(self) -> tuple[PlanStep, ...]:
        """The steps as a plan graph draws them (`after`: earlier blockers of the goal)."""
        ids = [s.id for s in self.steps]
        index = {sid: i for i, sid in enumerate(ids)}
        return tuple(
            PlanStep(s.title, "", tuple(index[b] for b in s.blockers if index.get(b, i) < i))
            for i, s in enumerate(self.steps)
        )


def board_of(
    tasks: Sequence[Task],
    log: ClaimLog,
    now: float,
    which: BoardFilter = BoardFilter(),
    spend: Mapping[str, Spend] | None = None,
) -> list[BoardPlan]:
    """The plans (goals with steps) of a listing that `which` takes, in the store's order."""
    children: dict[str, list[Task]] = {}
    for task in tasks:
        if task.parent:
            children.setdefault(task.parent, []).append(task)
    plans = []
    for goal in tasks:
        steps = children.get(goal.id)
        if goal.parent or not steps or (which.goal and goal.id != which.goal):
            continue
        holdings = {}
        for step in steps:
            held = holding_of(step, log, now, (spend or {}).get(step.id))
            if held is not None:
                holdings[step.id] = held
        if which.mine and not any(which.holds(h.holder) for h in holdings.values()):
            continue
        if which.states and not any(s.state in which.states for s in steps):
            continue
        plans.append(BoardPlan(goal, tuple(steps), holdings))
    return plans


def _age(seconds: float | None) -> str:
    """A duration as a person reads it: 42 s, 3 min 5 s, 2 h 10 min; '–' when unknown."""
    if seconds is None:
        return "–"
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def holding_cells(held: Holding) -> tuple[str, str, str, str, str, str]:
    """A holding's table cells as text (unescaped): holder, running, lease, heartbeat, spend,
    last tool call."""
    lease = (
        "lapsed"
        if held.lapsed
        else "no lease"
        if held.lease_left is None
        else _age(held.lease_left)
    )
    spent = str(held.spend) if held.spend is not None else "–"
    tool = held.last_tool or "–"
    return held.holder, _age(held.running), lease, _age(held.heartbeat_age), spent, tool


def holdings_table(plan: BoardPlan) -> str:
    """The claimed (and lapsed) steps of a plan as an HTML table; escaped."""
    rows = []
    for step in plan.steps:
        held = plan.holdings.get(step.id)
        if held is None:
            continue
        cells = (step.id, step.title, *holding_cells(held))
        cls = "board-lapsed" if held.lapsed else "board-held"
        tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        rows.append(f'<tr class="{cls}" data-step="{html.escape(step.id)}">{tds}</tr>')
    if not rows:
        return '<p class="board-none">no step is claimed</p>'
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "step",
            "title",
            "holder",
            "running",
            "lease left",
            "heartbeat",
            "spent",
            "last tool",
        )
    )
    table = f'<table class="board-holdings"><tr>{head}</tr>{"".join(rows)}</table>'
    return f'<div class="board-table">{table}</div>'


RETRIES = (StepState.FAILED, StepState.CANCELLED)  # the states a board offers to retry


def retry_table(plan: BoardPlan) -> str:
    """A plan's failed and skipped steps, each with a Retry button (escaped); '' for none."""
    rows = []
    for step in plan.steps:
        if step.state not in RETRIES:
            continue
        sid = html.escape(step.id)
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in (step.id, step.title, step.state))
        button = f'<td><button class="board-retry" data-step="{sid}">Retry</button></td>'
        rows.append(f'<tr class="board-failed" data-step="{sid}">{cells}{button}</tr>')
    if not rows:
        return ""
    return f'<div class="board-table"><table class="board-retries">{"".join(rows)}</table></div>'


def plan_drawing(plan: BoardPlan, rankdir: str = "LR") -> str:
    """A plan's graph as SVG (steps coloured by state; large plans collapsed), or a line
    saying why there is none; the graph's builder escapes its labels."""
    from ollie_nb.planning._dot import GraphvizUnavailable
    from ollie_nb.planning.graph import plan_svg, readable_rankdir

    steps = plan.plan_steps
    ids = [s.id for s in plan.steps]
    states = {s.id: s.state for s in plan.steps}
    try:
        direction = readable_rankdir(steps, rankdir)
        return plan_svg(
            plan.goal.title, steps, ids, states, goal_id=plan.goal.id, rankdir=direction
        )
    except GraphvizUnavailable as exc:
        return f'<p class="board-nograph">no graph: {html.escape(str(exc))}</p>'


def drawing_key(plan: BoardPlan) -> tuple[object, ...]:
    """What a plan's drawing depends on: a board whose key is unchanged reuses it."""
    steps = tuple((s.id, s.title, s.state, s.blockers) for s in plan.steps)
    return (plan.goal.id, plan.goal.title, steps)


def plan_section(plan: BoardPlan, drawing: str) -> str:
    """One plan's part of the board: its heading, its drawing, its claimed steps, and its
    failed or skipped steps with a Retry button (escaped)."""
    title = html.escape(plan.goal.title)
    done = sum(1 for s in plan.steps if s.state is StepState.DONE)
    count = f"{html.escape(plan.goal.id)} · {done}/{len(plan.steps)} done"
    return (
        f'<section class="board-plan" data-goal="{html.escape(plan.goal.id)}">'
        f"<h4>{title} <small>{count}</small></h4>"
        f'<div class="board-graph">{drawing}</div>{holdings_table(plan)}{retry_table(plan)}'
        "</section>"
    )


INBOX_PLACE = '<div class="board-inbox"></div>'
"""Where the inbox's rows (requests waiting on a person) go, above the plans."""

ANSWERS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "cap": (("raise", "Raise"), ("stop", "Stop")),
}
"""The buttons of a row by its kind (answer, label); any other kind: Allow / Deny."""
PERMIT = (("allow", "Allow"), ("deny", "Deny"))
RAISE_HINT = "by how much"  # a cap row's amount starts empty: dollars or tokens, as it asks


def board_answer(answer: str) -> bool:
    """Whether a button's answer is one the board gives: allow, deny, stop, raise:<amount>."""
    if answer in ("allow", "deny", "stop"):
        return True
    word, _, amount = answer.partition(":")
    try:
        return word == "raise" and float(amount) > 0
    except ValueError:
        return False


def inbox_row(request: InboxRequest) -> str:
    """One open request as a table row with its answer buttons; every field escaped."""
    rid = html.escape(request.id)
    cells = (request.goal, request.step, request.asker, request.what)
    tds = "".join(f"<td>{html.escape(cell)}</td>" for cell in cells)
    buttons = []
    for answer, label in ANSWERS.get(request.kind, PERMIT):
        if answer == "raise":
            buttons.append(
                '<input class="board-raise-by" type="number" min="0" step="any" '
                f'placeholder="{RAISE_HINT}">'
            )
        buttons.append(f'<button data-request="{rid}" data-answer="{answer}">{label}</button>')
    kind = html.escape(request.kind)
    return (
        f'<tr class="board-ask" data-request="{rid}" data-kind="{kind}">{tds}'
        f'<td class="board-answers">{"".join(buttons)}</td></tr>'
    )


def inbox_html(requests: Sequence[InboxRequest]) -> str:
    """The inbox's open requests above the plans (its empty place when none waits)."""
    if not requests:
        return INBOX_PLACE
    head = "".join(f"<th>{h}</th>" for h in ("plan", "step", "asks", "what", "answer"))
    rows = "".join(inbox_row(r) for r in requests)
    return (
        f'<div class="board-inbox"><p><b>inbox</b> · {len(requests)} waiting</p>'
        f'<table class="board-inbox-rows"><tr>{head}</tr>{rows}</table></div>'
    )


def board_html(
    plans: Sequence[BoardPlan], rankdir: str = "LR", inbox: Sequence[InboxRequest] = ()
) -> str:
    """The whole board: the inbox's rows, then each plan; a line when there is none."""
    if not plans:
        return inbox_html(inbox) + '<p class="board-empty">no plan on the task store matches</p>'
    return inbox_html(inbox) + "".join(plan_section(p, plan_drawing(p, rankdir)) for p in plans)
