"""Plain-text views of tasks, shared by the MCP tools and the CLI so both read the same."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ollie_nb.tasks._store import Event, Task, TaskNode, TaskRef, TaskSummary, plural

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


def claim_line(task: Task) -> str:
    """A claimed task in one line: id, [status], title, @holder and when its lease ends."""
    lease = f", lease ends {task.lease_until}" if task.lease_until else ", no lease"
    return f"{ref_line(task.ref())} @{task.assignee}{lease}"


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


def task_list_json(tasks: Sequence[TaskSummary], limit: int) -> str:
    """A list of tasks as JSON for programs; `blockers` are the ones not done yet.

    At most `limit` tasks; a cut list says so in an object of its own at the end.
    """
    shown = [
        {
            "id": t.id,
            "title": t.title,
            "status": t.status,
            "assignee": t.assignee,
            "parent": t.parent,
            "labels": list(t.labels),
            "blockers": list(t.waiting_on),
            "created_at": t.created_at,
            "updated_at": t.updated_at,
            "lease_until": t.lease_until,
        }
        for t in tasks[:limit]
    ]
    document: dict[str, object] = {"tasks": shown, "total": len(tasks)}
    if len(tasks) > limit:
        document["truncated"] = True
    return json.dumps(document, ensure_ascii=False)


def task_detail(task: Task) -> str:
    """A task with all its fields, neighbours, body and notes, for reading in full."""
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
            lines.extend("  " + ref_line(r) for r in refs)
    if task.body:
        lines += ["", task.body.rstrip("\n")]
    if task.notes:
        lines += ["", "notes:"]
        lines.extend(f"  {note.time}  {note.text}" for note in task.notes)
    return "\n".join(lines)


def task_tree(nodes: Sequence[TaskNode]) -> str:
    """An indented tree: each goal with its steps (children) and their statuses."""
    lines: list[str] = []

    def walk(node: TaskNode, depth: int) -> None:
        task = node.task
        waits = f"  (waits on {', '.join(task.waiting_on)})" if task.waiting_on else ""
        lines.append(f"{'  ' * depth}{task.id}  [{task.status}]  {task.title}{waits}")
        for child in node.children:
            walk(child, depth + 1)

    for node in nodes:
        walk(node, 0)
    return "\n".join(lines) if lines else "no tasks"


def event_line(event: Event) -> str:
    """One event in one line: seq, time, type, task, payload."""
    payload = json.dumps(event.payload, ensure_ascii=False, separators=(",", ":"))
    return f"{event.seq:>{SEQ_WIDTH}}  {event.time}  {event.type:<14}  {event.task}  {payload}"


def events_json(events: Sequence[Event]) -> str:
    """Events as a JSON list, the form `task_events` returns."""
    return json.dumps([e.to_dict() for e in events], ensure_ascii=False)
