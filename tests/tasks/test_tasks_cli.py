"""The `ollie-tasks` command for people, run as a real process on a real database."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ollie_nb.tasks import TaskStore
from tests.support.tasks_harness import cli


@pytest.fixture
def plan(db: Path) -> dict[str, str]:
    """A goal with three steps (b after a, c under b), a done; written straight to the store."""
    with TaskStore(db) as store:
        g = store.create("Ship the release", body="All of it", labels=["goal"])
        a = store.create("Build", parent=g)
        b = store.create("Test", parent=g, blockers=[a])
        c = store.create("Fix findings", parent=b, blockers=[b])
        store.update(a, status="done")
    return {"g": g, "a": a, "b": b, "c": c}


@pytest.mark.slow
def test_list_default_shows_open_tasks_one_per_line(db: Path, plan: dict[str, str]) -> None:
    run = cli(db, "list")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"{plan['g']}  open         Ship the release  (#goal)",
        f"{plan['b']}  open         Test  (parent {plan['g']})",
        f"{plan['c']}  open         Fix findings  (waits on {plan['b']}; parent {plan['b']})",
    ]


@pytest.mark.slow
def test_list_status_and_json(db: Path, plan: dict[str, str]) -> None:
    done = cli(db, "list", "--status", "done")
    assert [ln.split()[0] for ln in done.stdout.splitlines()] == [plan["a"]]
    rows = json.loads(cli(db, "list", "--status", "all", "--json").stdout)
    assert [r["id"] for r in rows] == [plan[k] for k in "gabc"]
    assert rows[3]["waiting_on"] == [plan["b"]] and rows[0]["labels"] == ["goal"]
    assert cli(db, "list", "--status", "bogus").returncode == 2  # argparse usage error


@pytest.mark.slow
def test_ready(db: Path, plan: dict[str, str]) -> None:
    assert [ln.split()[0] for ln in cli(db, "ready").stdout.splitlines()] == [plan["g"], plan["b"]]
    rows = json.loads(cli(db, "ready", "--json").stdout)
    assert [r["id"] for r in rows] == [plan["g"], plan["b"]]


@pytest.mark.slow
def test_show(db: Path, plan: dict[str, str]) -> None:
    text = cli(db, "show", plan["b"]).stdout
    assert text.startswith(f"{plan['b']}  Test\nstatus: open (ready)\n")
    assert f"blocked by:\n  {plan['a']}  [done]  Build" in text
    task = json.loads(cli(db, "show", plan["b"], "--json").stdout)
    assert task["ready"] is True
    assert task["parent"] == {"id": plan["g"], "status": "open", "title": "Ship the release"}
    assert [c["id"] for c in task["children"]] == [plan["c"]]
    assert [d["id"] for d in task["dependents"]] == [plan["c"]]


@pytest.mark.slow
def test_events(db: Path, plan: dict[str, str]) -> None:
    lines = cli(db, "events").stdout.splitlines()
    assert [ln.split()[2] for ln in lines] == ["created"] * 4 + ["status_changed", "unblocked"]
    events = json.loads(cli(db, "events", "--since", "4", "--json").stdout)
    assert [(e["seq"], e["type"], e["task"]) for e in events] == [
        (5, "status_changed", plan["a"]),
        (6, "unblocked", plan["b"]),
    ]
    assert cli(db, "events", "--since", "6").stdout == "no events\n"


@pytest.mark.slow
def test_tree(db: Path, plan: dict[str, str]) -> None:
    assert cli(db, "tree").stdout.splitlines() == [
        f"{plan['g']}  [open]  Ship the release",
        f"  {plan['a']}  [done]  Build",
        f"  {plan['b']}  [open]  Test",
        f"    {plan['c']}  [open]  Fix findings  (waits on {plan['b']})",
    ]
    (node,) = json.loads(cli(db, "tree", plan["b"], "--json").stdout)
    assert node["id"] == plan["b"]
    assert [c["id"] for c in node["children"]] == [plan["c"]]


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [("show", "t-zzzzz"), ("tree", "t-zzzzz"), ("list", "--parent", "t-zzzzz")],
)
def test_bad_id_is_one_line_on_stderr_and_exit_1(
    db: Path, plan: dict[str, str], args: tuple[str, ...]
) -> None:
    run = cli(db, *args)
    assert run.returncode == 1
    assert run.stdout == ""
    assert (
        run.stderr
        == "ollie-tasks: error: no task with id 't-zzzzz' (list the tasks to see valid ids)\n"
    )


@pytest.mark.slow
def test_missing_database_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "tasks.db"
    run = cli(missing, "list")
    assert run.returncode == 1
    assert len(run.stderr.splitlines()) == 1
    assert "no task database at" in run.stderr and "Traceback" not in run.stderr
    assert not missing.parent.exists()


@pytest.mark.slow
def test_db_from_option_after_subcommand_env_var_or_pwd(db: Path, plan: dict[str, str]) -> None:
    after = cli(None, "ready", "--db", str(db))
    assert plan["b"] in after.stdout
    env = {"PATH": os.environ["PATH"], "OLLIE_TASKS_DB": str(db)}
    assert plan["b"] in cli(None, "ready", env=env).stdout
    # No option and no variable: .ollie/tasks.db under $PWD, the project directory.
    project = db.parent.parent
    assert db == project / ".ollie" / "tasks.db"
    env = {"PATH": os.environ["PATH"], "PWD": str(project)}
    assert plan["b"] in cli(None, "ready", env=env).stdout


@pytest.mark.slow
@pytest.mark.parametrize("args", [("serve",), ()], ids=["serve", "no-subcommand"])
def test_serve_on_closed_stdin_creates_the_database_and_exits(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    # With stdin not a terminal, a bare `ollie-tasks` serves, as an MCP client starts it.
    db = tmp_path / "new" / "dir" / "tasks.db"
    run = cli(db, *args)
    assert run.returncode == 0, run.stderr
    with TaskStore(db, create=False) as store:
        assert store.list("all") == []


@pytest.mark.slow
def test_console_script_is_installed() -> None:
    script = shutil.which("ollie-tasks", path=str(Path(sys.executable).parent))
    assert script is not None
    run = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0
    assert all(cmd in run.stdout for cmd in ("serve", "list", "ready", "show", "events", "tree"))


@pytest.mark.slow
def test_the_package_imports_nothing_else_of_ollie_nb() -> None:
    # A standalone program: the core talks to it only over MCP; of the rest it takes only
    # the mask (the redaction leaf), without loading detect-secrets at start. The CLI's
    # reading commands also stay free of the MCP SDK, which only `serve` needs.
    code = (
        "import json, sys, ollie_nb.tasks.cli\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp')))\n"
        "import ollie_nb.tasks.server\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('ollie_nb'))))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('detect_secrets'))))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    mcp_modules, ours, detectors = (json.loads(line) for line in run.stdout.splitlines())
    assert mcp_modules == [] and detectors == []
    assert "ollie_nb.tasks.server" in ours
    leaves = ("ollie_nb", "ollie_nb.redaction")
    assert [m for m in ours if m not in leaves and not m.startswith("ollie_nb.tasks")] == []


@pytest.mark.slow
def test_events_limit_0_is_a_usage_error_and_columns_stay_aligned(
    db: Path, plan: dict[str, str]
) -> None:
    refused = cli(db, "events", "--limit", "0")
    assert refused.returncode == 2 and "must be 1 or more" in refused.stderr
    with TaskStore(db) as store:
        for i in range(6):
            store.update(plan["c"], note=f"note {i}")
    lines = cli(db, "events").stdout.splitlines()
    assert len(lines) == 12
    assert len({line.index(" 20") for line in lines}) == 1  # the time column starts alike


@pytest.mark.slow
def test_new_database_and_its_directory_are_private(db: Path) -> None:
    assert cli(db, "serve").returncode == 0
    assert db.stat().st_mode & 0o777 == 0o600
    assert db.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.slow
def test_claim_from_the_command_line(db: Path, plan: dict[str, str]) -> None:
    claimed = cli(db, "claim", plan["b"], "--as", "ann", "--lease", "0")
    assert claimed.stdout == f"claimed: {plan['b']}  [in_progress]  Test @ann, no lease\n"
    again = cli(db, "claim", plan["b"], "--as", "bob")
    assert again.returncode == 1 and "already claimed by ann" in again.stderr


def test_postgresql_url_works_and_its_password_is_never_printed(pg_cluster) -> None:
    url = pg_cluster.new_database().replace("postgres@", "postgres:Sekr3t-pw@")
    assert "Sekr3t-pw" in url
    env = {**os.environ, "OLLIE_TASKS_DB": url}
    assert cli(None, "serve", env=env).returncode == 0  # creates the schema, then stdin ends
    from ollie_nb.tasks import open_store

    with open_store(url) as store:
        task = store.create("On PostgreSQL")
        assert "Sekr3t-pw" not in repr(store) and "***" in store.location
    listed = cli(None, "list", env=env)
    assert listed.stdout.startswith(task) and listed.returncode == 0
    wrong = url.rsplit("/", 1)[0] + "/no_such_db"
    for result in (cli(wrong, "list"), cli(url.replace("127.0.0.1", "127.0.0.1:1"), "list")):
        warning, error = result.stderr.splitlines()[:2]  # a password as an argument: warned
        assert warning.startswith("ollie-tasks: WARNING: the password in --db")
        assert result.returncode == 1 and error.startswith("ollie-tasks: error:")
        assert "Sekr3t-pw" not in result.stdout + result.stderr
        assert "postgres:***@" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", ["list", "serve"])
def test_a_postgresql_url_without_psycopg_says_what_to_install(command: str) -> None:
    # As in an install without the postgres extra: psycopg cannot be imported.
    code = (
        "import sys\n"
        "sys.modules['psycopg'] = None\n"
        "from ollie_nb.tasks.cli import main\n"
        f"sys.exit(main(['--db', 'postgresql://ollie@127.0.0.1:1/plans', {command!r}]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == (
        "ollie-tasks: error: a postgresql:// database needs psycopg and psycopg-pool "
        "(psycopg is not installed): pip install 'ollie-nb[postgres]'\n"
    )


def test_every_subcommand_creates_the_tables_in_a_fresh_postgresql_database(pg_cluster) -> None:
    for args, expected in (
        (["list"], "no open tasks\n"),
        (["ready"], "no ready tasks\n"),
        (["events"], "no events\n"),
        (["tree"], "no tasks\n"),
        (["list", "--json"], "[]\n"),
    ):
        result = cli(pg_cluster.new_database(), *args)
        assert (result.returncode, result.stdout, result.stderr) == (0, expected, ""), args
    fresh = pg_cluster.new_database()
    for args in (["show", "t-zzzzz"], ["claim", "t-zzzzz", "--as", "ann"]):
        result = cli(fresh, *args)
        assert result.returncode == 1
        assert (
            result.stderr
            == "ollie-tasks: error: no task with id 't-zzzzz' (list the tasks to see valid ids)\n"
        )
