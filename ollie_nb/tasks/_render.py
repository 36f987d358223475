"""Plain-text views of tasks, shared by the MCP tools and the CLI so both read the same."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence

from ollie_nb.tasks._inbox import InboxRow
from ollie_nb.tasks._store import (
    Claimed,
    Event,
    Task,
    TaskNode,
    TaskRef,
    TaskSummary,
    plural,
)

_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""json.dumps(..., ensure_ascii=False) without building an encoder on each call."""

_SHOWN_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Controls a terminal acts on: C0 but tab and newline (carriage return too), DEL, C1."""
_JSON_CONTROLS = re.compile("[\x7f-\x9f]")
"""The controls json.dumps leaves raw (it escapes C0 itself)."""


def visible_controls(text: str) -> str:
    """`text` with each control character a terminal acts on written as `\\x1b`."""
    return _SHOWN_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def json_controls(text: str) -> str:
    """JSON text with DEL and C1 written as `\\u009b` escapes: still JSON, and inert."""
    return _JSON_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


SEQ_WIDTH = 7
"""Width of the seq column of event lines, so columns line up up to seq 9,999,999."""


def summary_line(task: TaskSummary) -> str:
    """One line per task: id, status, title, then what it waits on, parent, assignee, labels."""
    extras: list[str] = []
    if task.waiting_on:
        extras.append("waits on " + ", ".join(task.waiting_on))
    if task.parent:
        extras.append("parent " + task.parent)
    if task.assignee:
        extras.append("@" + task.assignee)
    if task.lease_until:
        extras.append("lease ends " + task.lease_until)
    if task.labels:
        extras.append(" ".join("#" + label for label in task.labels))
    line = f"{task.id}  {task.status:<11}  {task.title}"
    return line + (f"  ({'; '.join(extras)})" if extras else "")


def ref_line(ref: TaskRef) -> str:
    """A neighbouring task in one line: id, [status], title."""
    return f"{ref.id}  [{ref.status}]  {ref.title}"


def claim_line(task: Task | Claimed) -> str:
    """A claimed task in one line: id, [status], title, @holder and when its lease ends."""
    lease = f", lease ends {task.lease_until}" if task.lease_until else ", no lease"
    return f"{ref_line(task.ref())} @{task.assignee}{lease}"


def update_answer(task: TaskRef, unblocked: Sequence[TaskRef]) -> str:
    """What an update says: the task as it is now, then each task it unblocked."""
    lines = [f"ok: {ref_line(task)}"]
    lines += [f"unblocked: {ref_line(r)}" for r in unblocked]
    return "\n".join(lines)


def deleted_answer(deleted: Sequence[str]) -> str:
    """What a delete says: the task (last of `deleted`), then the subtasks it took along."""
    rest = deleted[:-1]
    return f"deleted {deleted[-1]}" + (
        f" and {plural(len(rest), 'subtask')}: {', '.join(rest)}" if rest else ""
    )


def dep_answer(task_id: str, blocker: str, added: bool) -> str:
    """What adding the edge `blocker` -> `task_id` says (`added`: False when it existed)."""
    return f"ok: {task_id} is {'now' if added else 'already'} blocked by {blocker}"


def dep_removed_answer(task_id: str, blocker: str, unblocked: Sequence[TaskRef]) -> str:
    """What removing the edge `blocker` -> `task_id` says, with the task if that unblocked it."""
    lines = [f"ok: {task_id} is no longer blocked by {blocker}"]
    lines += [f"unblocked: {ref_line(r)}" for r in unblocked]
    return "\n".join(lines)


def task_list(tasks: Sequence[TaskSummary], what: str, limit: int | None = None) -> str:
    """A list of tasks, one per line; `what` names the selection (`open tasks`) if empty or cut."""
    if not tasks:
        return f"no {what}"
    shown = tasks if limit is None else tasks[:limit]
    lines = [summary_line(t) for t in shown]
    if len(shown) < len(tasks):
        lines.append(
            f"... {len(tasks) - len(shown)} more {what} not shown; "
            "narrow the list with parent or label"
        )
    return "\n".join(lines)


LIST_FIELDS: tuple[str, ...] = (
    "id",
    "title",
    "status",
    "assignee",
    "parent",
    "labels",
    "blockers",
    "created_at",
    "updated_at",
    "lease_until",
)
"""The fields of a task in `task_list`'s JSON, in order; `blockers` are those not done yet."""
EXTRA_FIELDS: tuple[str, ...] = ("body", "labels_by", "progress")
"""Fields given only when asked for by name (a body may be 64 KiB; `labels_by`: who set
each label, for those an HTTP user set; `progress`: what a claim's holder last told)."""


_FIELD_OF: dict[str, Callable[[TaskSummary], object]] = {
    "id": lambda t: t.id,
    "title": lambda t: t.title,
    "status": lambda t: t.status,
    "assignee": lambda t: t.assignee,
    "parent": lambda t: t.parent,
    "labels": lambda t: list(t.labels),
    "blockers": lambda t: list(t.waiting_on),
    "created_at": lambda t: t.created_at,
    "updated_at": lambda t: t.updated_at,
    "lease_until": lambda t: t.lease_until,
    "body": lambda t: t.body,
    "labels_by": lambda t: dict(t.labels_by),
    "progress": lambda t: dataclasses.asdict(t.progress) if t.progress else None,
}


def _list_entry(task: TaskSummary, fields: Sequence[str]) -> dict[str, object]:
    return {f: _FIELD_OF[f](task) for f in fields}


def task_list_json(
    tasks: Sequence[TaskSummary],
    *,
    start: int = 0,
    max_chars: int,
    fields: Sequence[str] = LIST_FIELDS,
) -> str:
    """One page of a list of tasks as JSON for programs: `{tasks, total}`, and `next`
    (pass it as `cursor` to read on) when more tasks follow.

    The page starts at index `start` and holds as many tasks as fit in about
    `max_chars` characters (always at least one), each with only `fields`.
    """
    entries: list[dict[str, object]]
    if fields == ("id", "status"):  # the status readers' form, made in one pass
        entries = [{"id": t.id, "status": t.status} for t in tasks[start:]]
    else:
        entries = [_list_entry(t, fields) for t in tasks[start:]]
    whole = _ENCODE(entries)
    if len(whole) <= max_chars:  # all of it fits: no need to measure each task
        return '{"tasks": ' + whole + f', "total": {len(tasks)}' + "}"
    shown: list[str] = []
    size = 0
    for item in entries:
        entry = _ENCODE(item)
        if shown and size + len(entry) + 2 > max_chars:
            break
        shown.append(entry)
        size += len(entry) + 2
    rest = f', "total": {len(tasks)}'
    if start + len(shown) < len(tasks):
        rest += f', "next": "{start + len(shown)}", "truncated": true'
    return '{"tasks": [' + ", ".join(shown) + "]" + rest + "}"


def task_detail(task: Task, refs_shown: int | None = None) -> str:
    """A task with all its fields, neighbours, body and notes, for reading in full;
    at most `refs_shown` neighbours of each kind (blockers, dependents, children)."""
    if task.ready:
        state = f"{task.status} (ready)"
    else:
        waiting = [b for b in task.blockers if b.status != "done"]
        state = task.status + (
            f" (waiting on {plural(len(waiting), 'blocker')})" if waiting else ""
        )
    lines = [f"{task.id}  {task.title}", f"status: {state}"]
    if task.parent is not None:
        lines.append("parent: " + ref_line(task.parent))
    if task.assignee:
        lease = f" (lease ends {task.lease_until})" if task.lease_until else ""
        lines.append("assignee: " + task.assignee + lease)
    if task.progress is not None:
        lines.append("progress: " + task.progress.line() + " (as its holder told)")
    if task.labels:
        lines.append("labels: " + ", ".join(task.labels))
    times = f"created {task.created_at}, updated {task.updated_at}"
    lines.append(times + (f", closed {task.closed_at}" if task.closed_at else ""))
    for heading, refs in (
        ("blocked by", task.blockers),
        ("blocks", task.dependents),
        ("children", task.children),
    ):
        if refs:
            lines.append(f"{heading}:")
            lines.extend("  " + ref_line(r) for r in refs[:refs_shown])
            if refs_shown is not None and len(refs) > refs_shown:
                lines.append(f"  ... {len(refs) - refs_shown} more: {_more_hint(task.id, heading)}")
    if task.body:
        lines += ["", task.body.rstrip("\n")]
    if task.notes:
        lines += ["", notes_heading(task) + ":"]
        lines.extend(f"  {note.time}  {note.text}" for note in task.notes)
    return "\n".join(lines)


def _more_hint(task_id: str, heading: str) -> str:
    if heading == "children":
        return f"list them with task_list(parent='{task_id}', status='all')"
    return "not shown"


def notes_heading(task: Task) -> str:
    """`notes`, or which of them are shown and how to read the earlier ones."""
    shown = len(task.notes)
    if shown == task.notes_total:
        return "notes"
    last = task.notes_start + shown - 1
    earlier = (
        f"; read earlier ones with notes_before={task.notes_start}" if task.notes_start > 1 else ""
    )
    return f"notes {task.notes_start}-{last} of {task.notes_total}{earlier}"


def task_tree(nodes: Sequence[TaskNode]) -> str:
    """An indented tree: each goal with its steps (children) and their statuses."""
    lines: list[str] = []
    # A stack rather than recursion: a store may hold chains deeper than Python's limit.
    stack: list[tuple[TaskNode, int]] = [(node, 0) for node in reversed(nodes)]
    while stack:
        node, depth = stack.pop()
        task = node.task
        waits = f"  (waits on {', '.join(task.waiting_on)})" if task.waiting_on else ""
        lines.append(f"{'  ' * depth}{task.id}  [{task.status}]  {task.title}{waits}")
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return "\n".join(lines) if lines else "no tasks"


def event_line(event: Event) -> str:
    """One event in one line: seq, time, type, task, payload."""
    payload = json.dumps(event.payload, ensure_ascii=False, separators=(",", ":"))
    return f"{event.seq:>{SEQ_WIDTH}}  {event.time}  {event.type:<14}  {event.task}  {payload}"


def events_json(events: Sequence[Event]) -> str:
    """Events as a JSON list, the form `task_events` returns."""
    return json.dumps([e.to_dict() for e in events], ensure_ascii=False)


def events_within(events: Sequence[Event], max_chars: int) -> list[str]:
    """The JSON texts of the first events that fit in `max_chars` (always at least one)."""
    texts: list[str] = []
    size = 0
    for event in events:
        text = _ENCODE(event.to_dict())
        if texts and size + len(text) + 2 > max_chars:
            break
        texts.append(text)
        size += len(text) + 2
    return texts


def events_page(texts: Sequence[str], next_seq: int, more: bool) -> str:
    """A page of events (JSON texts from `events_within`) as `{events, next, more}`:
    `next` is the seq to pass as `since` to read on, `more` whether events follow."""
    events = "[" + ", ".join(texts) + "]"
    return f'{{"events": {events}, "next": {next_seq}, "more": {json.dumps(more)}}}'


def inbox_line(row: InboxRow) -> str:
    """One inbox request in one line: id, state, kind, who asks, what; then where and when."""
    what = " ".join(row.what.split())
    extras = [f"{k} {v}" for k, v in (("goal", row.goal), ("step", row.step)) if v]
    if row.answer:
        extras.append(f"{row.answer} by {row.answered_by or 'someone unnamed'}")
    else:
        extras.append(("timed out " if row.state == "expired" else "until ") + row.deadline)
    return f"{row.id}  {row.state:<8}  {row.kind:<11}  @{row.asker}  {what}  ({'; '.join(extras)})"


def inbox_text(rows: Sequence[InboxRow], what: str, next_start: int | None) -> str:
    """A page of the inbox as lines, with how to read on when more follow."""
    if not rows:
        return f"no {what}"
    more = [f"(more: pass cursor {next_start})"] if next_start is not None else []
    return "\n".join([*(inbox_line(r) for r in rows), *more])


def inbox_json(rows: Sequence[InboxRow], next_start: int | None) -> str:
    """A page of the inbox as `{requests}`, with `next` (pass it as cursor) when more follow."""
    document: dict[str, object] = {"requests": [r.to_dict() for r in rows]}
    if next_start is not None:
        document["next"] = str(next_start)
    return _ENCODE(document)
