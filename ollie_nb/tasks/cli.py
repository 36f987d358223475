"""`ollie-tasks`: serve the task store over MCP, or look at it from a terminal."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import re
import secrets
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ollie_nb.tasks import _render
from ollie_nb.tasks._backends import open_store
from ollie_nb.tasks._errors import InvalidTaskError, StoreError, TaskError
from ollie_nb.tasks._inbox import INBOX_FILTERS, Inbox, InboxRow
from ollie_nb.tasks._location import DB_ENV_VAR, has_password, is_database_url, resolve_db
from ollie_nb.tasks._progress import progress_of
from ollie_nb.tasks._schema import STATUSES
from ollie_nb.tasks._store import (
    DEFAULT_LEASE,
    DETACH_PARENT,
    LEASE_CAP,
    LIST_FILTERS,
    MAX_LEASE,
    LeaseBounds,
    SqlTaskStore,
    Task,
)

PROG = "ollie-tasks"

_SURROGATE = re.compile("[\udc80-\udcff]")
"""What Python makes of an argument's bytes that are not UTF-8 (surrogateescape)."""

HTTP_CONNECTIONS = 4
"""PostgreSQL connections the HTTP server pools for its concurrent clients."""


def _open(
    args: argparse.Namespace, *, create: bool = False, max_connections: int = 1
) -> SqlTaskStore:
    """Open the database the arguments point at; reading never creates a SQLite file.

    A PostgreSQL database named by URL exists already, so every subcommand installs the
    task tables in it, as opening an existing SQLite file does.
    """
    target = resolve_db(args.db)
    create = create or is_database_url(target)
    try:
        return open_store(target, create=create, max_connections=max_connections)
    except StoreError as exc:
        if isinstance(target, str) or target.exists():
            raise
        raise StoreError(
            f"{exc} (pass --db PATH, set {DB_ENV_VAR}, or run from the project directory)"
        ) from exc


def _print_json(value: Any) -> None:
    print(_render.json_controls(json.dumps(value, ensure_ascii=False, indent=2)))


def _print(text: str) -> None:
    """Print store text with its control characters made visible (`\\x1b`): a title must
    not drive the reader's terminal."""
    print(_render.visible_controls(text))


def _cmd_serve(args: argparse.Namespace) -> int:
    # Imported here: the MCP SDK takes most of a second to import, and only serve needs it.
    from ollie_nb.tasks import server

    leases = LeaseBounds(cap=args.max_lease, endless=args.endless_leases)
    if not args.http:
        with _open(args, create=True) as store:
            server.serve(store, watch_interval=args.watch_interval, leases=leases)
        return 0
    from ollie_nb.tasks._http import TOKEN_ENV_VAR, is_loopback, read_tokens_file

    users = read_tokens_file(args.tokens) if args.tokens else {}
    token = args.token or _read_token_file(args.token_file) or os.environ.get(TOKEN_ENV_VAR, "")
    with _open(args, create=True, max_connections=HTTP_CONNECTIONS) as store:
        say = functools.partial(print, file=sys.stderr, flush=True)
        if not is_loopback(args.host):
            say(
                f"{PROG}: WARNING: listening on {args.host}, not loopback: other machines "
                "can reach this server; only the bearer token keeps them out"
            )
        if not token and not users:
            token = secrets.token_urlsafe(32)
            say(f"{PROG}: no --token-file or ${TOKEN_ENV_VAR} given; this run's token is: {token}")
        say(
            f"{PROG}: serving MCP on http://{args.host}:{args.port}/mcp (database {store.location})"
        )
        server.serve_http(
            store,
            host=args.host,
            port=args.port,
            users={**users, token: ""} if token else users,
            watch_interval=args.watch_interval,
            leases=leases,
        )
    return 0


def _read_token_file(path: str) -> str:
    """The token in the file at `path` (its first line), "" when no file is named."""
    if not path:
        return ""
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as file:
            token = file.readline().strip()
    except OSError as exc:
        raise StoreError(f"cannot read --token-file {path}: {exc.strerror or exc}") from None
    if not token:
        raise StoreError(f"--token-file {path} is empty: put the token on its first line")
    return token


def _warn_secrets_on_command_line(args: argparse.Namespace) -> None:
    """One stderr line per secret given as an argument: every local user can read those."""
    from ollie_nb.tasks._http import TOKEN_ENV_VAR

    found: list[str] = []
    if getattr(args, "token", ""):
        found.append(f"--token (use ${TOKEN_ENV_VAR} or --token-file)")
    if has_password(getattr(args, "db", None)):
        found.append(f"the password in --db (use ${DB_ENV_VAR})")
    for what in found:
        print(
            f"{PROG}: WARNING: {what}: arguments are visible to every local user in the "
            "process list",
            file=sys.stderr,
            flush=True,
        )


def _cmd_claim(args: argparse.Namespace) -> int:
    with _open(args) as store:
        # The shell is trusted: its claim is bound to a token like any, which it never needs.
        task = store.claim(args.id, args.assignee, args.lease).task
    return _print_claim(args, task, "claimed")


def _cmd_heartbeat(args: argparse.Namespace) -> int:
    told = None if args.tokens is None else progress_of(args.tokens, args.cost, args.last_tool)
    with _open(args) as store:
        task = store.heartbeat(args.id, args.assignee, args.lease, progress=told)
    return _print_claim(args, task, "renewed")


def _print_claim(args: argparse.Namespace, task: Task, done: str) -> int:
    if args.json:
        _print_json(task.to_dict())
    else:
        _print(f"{done}: {_render.claim_line(task)}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    with _open(args) as store:
        tasks = store.list(args.status, args.parent, args.label)
    if args.json:
        _print_json([t.to_dict() for t in tasks])
    else:
        what = "tasks" if args.status == "all" else f"{args.status} tasks"
        _print(_render.task_list(tasks, what))
    return 0


def _cmd_ready(args: argparse.Namespace) -> int:
    with _open(args) as store:
        tasks = store.ready()
    if args.json:
        _print_json([t.to_dict() for t in tasks])
    else:
        _print(_render.task_list(tasks, "ready tasks"))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    with _open(args) as store:
        task = store.get(args.id)
    if args.json:
        _print_json(task.to_dict())
    else:
        _print(_render.task_detail(task))
    return 0


def _cmd_events(args: argparse.Namespace) -> int:
    with _open(args) as store:
        events = store.events(args.since, args.limit)
    if args.json:
        _print_json([e.to_dict() for e in events])
    else:
        _print("\n".join(_render.event_line(e) for e in events) if events else "no events")
    return 0


def _cmd_tree(args: argparse.Namespace) -> int:
    with _open(args) as store:
        nodes = store.tree(args.id or "")
    if args.json:
        # The encoder recurses once per level: let it through a chain of any depth
        # (stores made before MAX_DEPTH was enforced may hold very deep ones).
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * len(_render.task_tree(nodes).splitlines()) + 1000))
        try:
            _print_json([n.to_dict() for n in nodes])
        finally:
            sys.setrecursionlimit(limit)
    else:
        _print(_render.task_tree(nodes))
    return 0


def _cmd_create(args: argparse.Namespace) -> int:
    # Creating is the one change that makes a new database, as `serve` does.
    with _open(args, create=True) as store:
        task_id = store.create(args.title, args.body, args.parent, args.blockers, args.labels)
        task = store.get(task_id) if args.json else None
    if task is not None:
        _print_json(task.to_dict())
    else:
        print(task_id)  # the only output, for `id=$(ollie-tasks create ...)`
    return 0


def _cmd_update(args: argparse.Namespace) -> int:
    """update, done and note: one store call, as task_update makes (no claim token asked)."""
    with _open(args) as store:
        unblocked = store.update(args.id, args.status, args.assignee, args.note)
        task = store.get(args.id)
    if args.json:
        _print_json(
            {"task": task.to_dict(), "unblocked": [dataclasses.asdict(r) for r in unblocked]}
        )
    else:
        _print(_render.update_answer(task.ref(), unblocked))
    return 0


def _cmd_reopen(args: argparse.Namespace) -> int:
    """Reopen each task in turn, as task_reopen does; at a refusal, those reopened before
    it are printed, then the refusal (the tasks after it are left as they are)."""
    reopened: list[tuple[str, str]] = []
    try:
        with _open(args) as store:
            for task_id in args.ids:
                reopened.append((task_id, store.reopen(task_id, args.note)))
    except TaskError:
        if reopened:
            _print_reopened(args, reopened)
        raise
    _print_reopened(args, reopened)
    return 0


def _print_reopened(args: argparse.Namespace, reopened: list[tuple[str, str]]) -> None:
    if args.json:
        _print_json([{"id": task_id, "was": old} for task_id, old in reopened])
    else:
        _print("\n".join(f"ok: {task_id} reopened (was {old})" for task_id, old in reopened))


def _cmd_edit(args: argparse.Namespace) -> int:
    with _open(args) as store:
        store.edit(args.id, args.title, args.body, args.parent)
        task = store.get(args.id)
    if args.json:
        _print_json(task.to_dict())
    else:
        _print(_render.update_answer(task.ref(), ()))
    return 0


def _cmd_dep(args: argparse.Namespace) -> int:
    with _open(args) as store:
        if args.remove:
            unblocked = store.remove_dep(args.id, args.on)
            text = _render.dep_removed_answer(args.id, args.on, unblocked)
            answer: dict[str, Any] = {"removed": True}
            answer["unblocked"] = [dataclasses.asdict(r) for r in unblocked]
        else:
            added = store.add_dep(args.id, args.on)
            text = _render.dep_answer(args.id, args.on, added)
            answer = {"added": added}
    if args.json:
        _print_json({"id": args.id, "blocker": args.on, **answer})
    else:
        _print(text)
    return 0


def _cmd_delete(args: argparse.Namespace) -> int:
    with _open(args) as store:
        deleted = store.delete(args.id, args.recursive)
    if args.json:
        _print_json({"deleted": deleted})
    else:
        _print(_render.deleted_answer(deleted))
    return 0


def _cmd_inbox(args: argparse.Namespace) -> int:
    rows: list[InboxRow] = []
    with _open(args) as store:
        more = True
        while more:  # every page: a shell reads the whole inbox
            page, more = Inbox(store).list(args.state, start=len(rows))
            rows += page
    if args.json:
        _print_json([r.to_dict() for r in rows])
    else:
        _print(_render.inbox_text(rows, f"{args.state} requests", None))
    return 0


def _cmd_answer(args: argparse.Namespace) -> int:
    with _open(args) as store:
        row = Inbox(store).answer(args.id, args.answer, args.by)
    if args.json:
        _print_json(row.to_dict())
    else:
        _print(f"answered: {_render.inbox_line(row)}")
    return 0


def _add_inbox(add: Callable[..., argparse.ArgumentParser]) -> None:
    inbox = add("inbox", _cmd_inbox, "list the inbox: requests that wait on a person")
    inbox.add_argument("--state", choices=INBOX_FILTERS, default="open", help="default: open")
    answer = add("answer", _cmd_answer, "answer an open inbox request once")
    answer.add_argument("id", metavar="ID")
    answer.add_argument("answer", metavar="ANSWER", help="allow, deny, stop or raise:<amount>")
    answer.add_argument("--by", default="", metavar="NAME", help="who answers (recorded)")


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _lease_seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError("must be 0 (no lease) or more seconds")
    return value


def _max_lease(text: str) -> float:
    value = float(text)
    if not 1 <= value <= MAX_LEASE:
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_LEASE:g} seconds")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; `--db` is accepted before or after the subcommand."""
    db_help = (
        "task database: a SQLite file or a postgresql://user@host:port/dbname URL "
        f"(default: ${DB_ENV_VAR}, else $PWD/.ollie/tasks.db)"
    )
    common = _Parser(add_help=False)
    common.add_argument("--db", metavar="DB", default=argparse.SUPPRESS, help=db_help)
    as_json = _Parser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON instead of text")

    parser = _Parser(
        prog=PROG,
        description="Task store for planning agents: an MCP server and a CLI over one "
        "SQLite file or a PostgreSQL database. Without a subcommand and with stdin not a terminal, it serves MCP "
        "over stdio.",
    )
    parser.add_argument("--db", metavar="DB", default=None, help=db_help)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(
        name: str, handler: Callable[[argparse.Namespace], int], help_: str, json_: bool = True
    ) -> argparse.ArgumentParser:
        parents = [common, as_json] if json_ else [common]
        p = sub.add_parser(name, parents=parents, help=help_, description=help_)
        p.set_defaults(handler=handler)
        return p

    _add_serve(add)
    _add_reads(add)
    _add_changes(add)
    _add_inbox(add)
    return parser


def _add_serve(add: Callable[..., argparse.ArgumentParser]) -> None:
    """`serve` and its options: transport, tokens and users, lease bounds, the file watch."""
    serve = add("serve", _cmd_serve, "serve the task tools over MCP (stdio by default)", False)
    serve.add_argument("--http", action="store_true", help="serve streamable HTTP instead")
    serve.add_argument("--port", type=int, default=8000, help="HTTP port (default: 8000)")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP bind address (default: 127.0.0.1; anything else is reachable from "
        "other machines)",
    )
    serve.add_argument(
        "--token",
        default="",
        help="bearer token HTTP clients must send; visible in the process list, so prefer "
        "--token-file or $OLLIE_TASKS_TOKEN (default: a fresh one printed to stderr at start)",
    )
    serve.add_argument(
        "--token-file",
        default="",
        metavar="PATH",
        help="read the bearer token from the first line of this file",
    )
    serve.add_argument(
        "--tokens",
        default="",
        metavar="PATH",
        help="HTTP users: one `name token` per line (# comments); a request's user is its "
        "token's name, and it claims and renews only as that name",
    )
    serve.add_argument(
        "--max-lease",
        type=_max_lease,
        default=LEASE_CAP,
        metavar="SECONDS",
        help=f"longest lease an MCP client gets; longer ones are cut to it (default: {LEASE_CAP:g})",
    )
    serve.add_argument(
        "--endless-leases",
        action="store_true",
        help="accept lease 0, a claim without end (for a store one person uses alone)",
    )
    serve.add_argument(
        "--watch-interval",
        type=float,
        default=0.025,
        metavar="SECONDS",
        help="how often to look at a SQLite file for changes by other processes "
        "(PostgreSQL notifies instead; 0: never watch; default: 0.025)",
    )


def _add_reads(add: Callable[..., argparse.ArgumentParser]) -> None:
    """The subcommands that claim and read: claim, heartbeat, list, ready, show, events, tree."""
    claim = add("claim", _cmd_claim, "claim a ready, unclaimed task: in_progress for ASSIGNEE")
    heartbeat = add("heartbeat", _cmd_heartbeat, "renew the lease of a claim ASSIGNEE holds")
    for p in (claim, heartbeat):
        p.add_argument("id", metavar="ID")
        p.add_argument("--assignee", "--as", dest="assignee", required=True, metavar="ASSIGNEE")
        p.add_argument(
            "--lease",
            type=_lease_seconds,
            default=DEFAULT_LEASE,
            metavar="SECONDS",
            help=f"the claim ends this long from now unless renewed (0: never; "
            f"default: {DEFAULT_LEASE:g})",
        )
    heartbeat.add_argument(
        "--tokens",
        type=int,
        metavar="N",
        help="tell the step's progress: tokens spent on it so far (with --cost, --last-tool)",
    )
    heartbeat.add_argument(
        "--cost", type=float, default=0.0, metavar="DOLLARS", help="dollars spent on it so far"
    )
    heartbeat.add_argument(
        "--last-tool", default="", metavar="NAME", help="the last tool it called"
    )

    list_ = add("list", _cmd_list, "list tasks, one per line")
    list_.add_argument("--status", choices=LIST_FILTERS, default="open", help="default: open")
    list_.add_argument("--parent", default="", metavar="ID", help="only children of this task")
    list_.add_argument("--label", default="", help="only tasks with this label")

    add("ready", _cmd_ready, "list open tasks whose blockers are all done")

    show = add("show", _cmd_show, "show one task in full")
    show.add_argument("id", metavar="ID")

    events = add("events", _cmd_events, "print the event log")
    events.add_argument(
        "--since", type=_non_negative_int, default=0, metavar="SEQ", help="only after this seq"
    )
    events.add_argument(
        "--limit", type=_positive_int, default=1000, metavar="N", help="1 to 1000 (default: 1000)"
    )

    tree = add("tree", _cmd_tree, "show goals with their steps as an indented tree")
    tree.add_argument("id", metavar="ID", nargs="?", help="only this task's subtree")


def _add_changes(add: Callable[..., argparse.ArgumentParser]) -> None:
    """The subcommands that change the store, one per MCP tool (task_create ... task_dep)."""
    create = add("create", _cmd_create, "create an open task and print its id")
    create.add_argument("title", metavar="TITLE", help="one line, at most 500 characters")
    create.add_argument("--body", default="", metavar="TEXT", help="details, at most 64 KiB")
    create.add_argument("--parent", default="", metavar="ID", help="the goal this is a step of")
    create.add_argument(
        "--blocker",
        dest="blockers",
        action="append",
        default=[],
        metavar="ID",
        help="a task that must be done first (repeat for several)",
    )
    create.add_argument(
        "--label", dest="labels", action="append", default=[], help="a tag (repeat for several)"
    )

    update = add("update", _cmd_update, "change a task's status or assignee, or add a note")
    update.add_argument("--status", choices=STATUSES, default="", help="the new status")
    update.add_argument("--assignee", "--as", dest="assignee", default="", metavar="ASSIGNEE")
    update.add_argument("--note", default="", metavar="TEXT", help="text added to its notes")
    done = add("done", _cmd_update, "mark a task done; print the tasks that became ready")
    done.add_argument("--note", default="", metavar="TEXT", help="text added to its notes")
    done.set_defaults(status="done", assignee="")
    note = add("note", _cmd_update, "add a note to a task")
    note.set_defaults(status="", assignee="")
    for p in (update, done, note):
        p.add_argument("id", metavar="ID")
    note.add_argument("note", metavar="TEXT")

    reopen = add(
        "reopen", _cmd_reopen, "open failed, cancelled or handed-back tasks again, unassigned"
    )
    reopen.add_argument("ids", metavar="ID", nargs="+")
    reopen.add_argument("--note", default="", metavar="TEXT", help="text added to their notes")

    edit = add("edit", _cmd_edit, "revise a task's title, body or parent")
    edit.add_argument("id", metavar="ID")
    edit.add_argument("--title", default="", help="the new one-line title")
    edit.add_argument("--body", default="", metavar="TEXT", help="the new body")
    edit.add_argument(
        "--parent", default="", metavar="ID", help=f"the new parent ({DETACH_PARENT!r}: none)"
    )

    dep = add("dep", _cmd_dep, "make a task wait on another (or no longer: --remove)")
    dep.add_argument("id", metavar="ID")
    dep.add_argument("--on", required=True, metavar="ID", help="the task that must be done first")
    dep.add_argument("--remove", action="store_true", help="remove that dependency instead")

    delete = add("delete", _cmd_delete, "delete a task and its dependencies")
    delete.add_argument("id", metavar="ID")
    delete.add_argument(
        "--recursive", action="store_true", help="with its children: the whole subtree"
    )


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors show control characters as `\\x1b`: they
    quote what was typed, which may hold an escape sequence."""

    def error(self, message: str) -> NoReturn:
        super().error(_render.visible_controls(message))


def _refuse_undecodable(args: argparse.Namespace) -> None:
    """Refuse an argument that was not UTF-8 (Python keeps its bytes as lone surrogates,
    which no database stores), naming the byte rather than failing deep in a write."""
    for name, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (bad := _SURROGATE.search(text)) is not None:
                byte = ord(bad.group()) - 0xDC00
                raise InvalidTaskError(
                    f"{name} is not UTF-8 text (byte 0x{byte:02x} at {bad.start()}): "
                    "give it as UTF-8"
                )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (0 ok, 1 error, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        if sys.stdin.isatty():
            parser.print_help()
            return 2
        # Started by an MCP client with no arguments, as in `command: ollie-tasks`.
        args = parser.parse_args([*(argv or sys.argv[1:]), "serve"])
    if args.command == "serve" and args.http and not 0 < args.port < 65536:
        parser.error(f"bad --port {args.port}")
    _warn_secrets_on_command_line(args)
    try:
        _refuse_undecodable(args)
        return args.handler(args)
    except TaskError as exc:
        print(f"{PROG}: error: {_render.visible_controls(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, like other Unix tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
