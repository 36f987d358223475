"""TaskStore on a real SQLite file: schema, ids, ready/unblocked rules, speed, and DB location."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ollie_nb.tasks import (
    SCHEMA_VERSION,
    CycleError,
    InvalidTaskError,
    StoreError,
    TaskStore,
    UnknownTaskError,
    _store,
    open_store,
    resolve_db_path,
)


@pytest.fixture
def store(any_db: str | Path):
    """A fresh store on each backend in turn."""
    with open_store(any_db) as s:
        yield s


def event_types(store: TaskStore, since: int = 0) -> list[tuple[str, str]]:
    return [(e.type, e.task) for e in store.events(since, 1000)]


# --- schema and file ------------------------------------------------------------------------


def test_new_database_is_wal_with_a_schema_version(db: Path) -> None:
    TaskStore(db).close()
    TaskStore(db).close()  # opening again must not migrate again
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        versions = conn.execute("SELECT version FROM schema_version").fetchall()
        assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
    finally:
        conn.close()


def test_database_from_a_newer_version_is_refused(db: Path) -> None:
    TaskStore(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'later')", (SCHEMA_VERSION + 1,))
    conn.close()
    with pytest.raises(StoreError, match="newer than this ollie-tasks understands"):
        TaskStore(db)


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite at all " * 100)
    with pytest.raises(StoreError, match="cannot use task database"):
        TaskStore(junk)


def test_id_collisions_draw_a_new_id(store: TaskStore, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = store.create("first")
    draws = iter([taken, taken, "t-fresh"])
    monkeypatch.setattr(_store, "_new_id", lambda length: next(draws))
    assert store.create("second") == "t-fresh"
    assert [t.title for t in store.list("all")] == ["first", "second"]
    assert event_types(store) == [("created", taken), ("created", "t-fresh")]


# --- statuses, ready and unblocked -------------------------------------------------------------


def test_unblocked_only_when_the_last_unfinished_blocker_is_done(store: TaskStore) -> None:
    a, b = store.create("a"), store.create("b")
    c = store.create("c", blockers=[a, b, a])  # duplicates collapse
    assert store.get(c).blockers == (store.get(a).ref(), store.get(b).ref())
    seq = store.last_seq()
    assert store.update(a, status="done") == ()
    assert [t.id for t in store.ready()] == [b]
    assert [r.id for r in store.update(b, status="done")] == [c]
    assert event_types(store, seq) == [
        ("status_changed", a),
        ("status_changed", b),
        ("unblocked", c),
    ]
    assert [t.id for t in store.ready()] == [c]


def test_closed_or_deferred_tasks_are_not_ready(store: TaskStore) -> None:
    blocker = store.create("blocker")
    cancelled = store.create("cancelled", blockers=[blocker])
    deferred = store.create("deferred", blockers=[blocker])
    store.update(cancelled, status="cancelled")
    store.update(deferred, status="deferred")
    # A cancelled dependent is not reported as unblocked; a deferred one is, but is not ready.
    assert [r.id for r in store.update(blocker, status="done")] == [deferred]
    assert store.ready() == []


def test_a_failed_blocker_keeps_its_dependents_waiting(store: TaskStore) -> None:
    blocker = store.create("blocker")
    waiting = store.create("waiting", blockers=[blocker])
    store.update(blocker, status="failed")
    assert store.ready() == []
    assert [(t.id, t.waiting_on) for t in store.list("open")] == [(waiting, (blocker,))]


def test_closed_at_follows_the_status(store: TaskStore) -> None:
    t = store.create("t")
    assert store.get(t).closed_at == ""
    store.update(t, status="done")
    closed = store.get(t).closed_at
    assert closed
    store.update(t, status="cancelled")
    assert store.get(t).closed_at == closed  # still closed since the first close
    store.update(t, status="in_progress")
    assert store.get(t).closed_at == ""


def test_setting_the_same_status_records_nothing(store: TaskStore) -> None:
    t = store.create("t")
    seq = store.last_seq()
    store.update(t, status="open")
    assert store.last_seq() == seq


def test_removing_a_done_blocker_or_deleting_one_unblocks_nothing(store: TaskStore) -> None:
    done = store.create("done")
    t = store.create("t", blockers=[done])
    store.update(done, status="done")
    seq = store.last_seq()
    assert store.remove_dep(t, done) == ()
    store.add_dep(t, done)
    store.delete(done)
    assert [kind for kind, _ in event_types(store, seq)] == ["dep_removed", "dep_added", "deleted"]
    assert store.get(t).blockers == ()


def test_a_long_chain_refuses_the_closing_edge(store: TaskStore) -> None:
    chain = [store.create("step 0")]
    for i in range(1, 50):
        chain.append(store.create(f"step {i}", blockers=[chain[-1]]))
    with pytest.raises(CycleError, match="would be a cycle"):
        store.add_dep(chain[0], chain[-1])
    assert store.add_dep(chain[-1], chain[0]) is True  # same direction as the chain: fine


def test_limits_are_checked(store: TaskStore) -> None:
    t = store.create("ok")
    with pytest.raises(InvalidTaskError, match="60 labels given"):
        store.create("t", labels=[f"l{i}" for i in range(60)])
    with pytest.raises(InvalidTaskError, match="assignee must be one line"):
        store.update(t, assignee="x" * 201)
    assert store.last_seq() == 1


def test_events_page_is_capped(store: TaskStore) -> None:
    for i in range(3):
        store.create(f"t{i}")
    assert len(store.events(0, 10_000)) == 3
    assert [e.seq for e in store.events(1, 1)] == [2]


def test_tree_of_the_whole_store(store: TaskStore) -> None:
    g = store.create("goal")
    s1 = store.create("s1", parent=g)
    s2 = store.create("s2", parent=g)
    s11 = store.create("s11", parent=s1)
    other = store.create("other")
    tree = store.tree()
    assert [n.task.id for n in tree] == [g, other]
    assert [n.task.id for n in tree[0].children] == [s1, s2]
    assert [n.task.id for n in tree[0].children[0].children] == [s11]
    assert tree[0].to_dict()["children"][0]["children"][0]["title"] == "s11"


# --- ready on a large store (its speed is measured by `python -m bench`) -----------------


def test_ready_on_10000_tasks_is_exact(store: TaskStore) -> None:
    # 1000 plans of a goal and 9 chained steps; 600 plans finished, the rest part-way.
    rows, deps = [], []
    for plan in range(1000):
        goal = f"t-g{plan:04d}"
        rows.append((goal, f"goal {plan}", "open", None))
        previous = None
        for step in range(9):
            tid = f"t-s{plan:04d}{step}"
            finished = plan < 600 or step < plan % 9
            rows.append((tid, f"step {step}", "done" if finished else "open", goal))
            if previous:
                deps.append((tid, previous))
            previous = tid

    def insert(conn) -> None:  # raw rows through the store's own connection, either backend
        conn.executemany(
            "INSERT INTO tasks (id, title, status, parent, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')",
            rows,
        )
        conn.executemany("INSERT INTO deps (task, blocker) VALUES (?, ?)", deps)

    store._run(insert, write=True)

    ready = store.ready()
    # every goal, plus the one step of each unfinished plan whose predecessor is done
    assert len(ready) == 1000 + 400
    ready_steps = {t.id for t in ready if t.id.startswith("t-s")}
    expected = {f"t-s{p:04d}{p % 9}" for p in range(600, 1000)}
    assert ready_steps == expected


# --- where the database lives ---------------------------------------------------------------


def test_db_path_order_option_then_env_then_pwd(tmp_path: Path) -> None:
    env = {"OLLIE_TASKS_DB": str(tmp_path / "env.db"), "PWD": str(tmp_path / "proj")}
    assert resolve_db_path(str(tmp_path / "opt.db"), env) == tmp_path / "opt.db"
    assert resolve_db_path(None, env) == tmp_path / "env.db"
    assert resolve_db_path(None, {"PWD": str(tmp_path / "proj")}) == (
        tmp_path / "proj" / ".ollie" / "tasks.db"
    )
    assert resolve_db_path("~/x.db", {}) == Path.home() / "x.db"


# --- goals close with their last step; claims -------------------------------------------------


def test_a_goal_is_done_when_its_last_child_is_done(store: TaskStore) -> None:
    top = store.create("top")
    goal = store.create("goal", parent=top)
    a, b = store.create("a", parent=goal), store.create("b", parent=goal)
    after = store.create("after the goal", blockers=[goal])
    store.update(a, status="done")
    assert store.get(goal).status == "open"
    seq = store.last_seq()
    unblocked = store.update(b, status="done")
    assert [r.id for r in unblocked] == [after]
    assert (store.get(goal).status, store.get(top).status) == ("done", "done")
    assert store.get(goal).closed_at
    changes = [(e.type, e.task, e.payload.get("reason")) for e in store.events(seq)]
    assert changes == [
        ("status_changed", b, None),
        ("status_changed", goal, "children_done"),
        ("unblocked", after, "done"),
        ("status_changed", top, "children_done"),
    ]
    store.update(a, status="open")  # reopening a step leaves the closed goal as it is
    assert store.get(goal).status == "done"


def test_claim_is_atomic_and_explains_a_refusal(store: TaskStore) -> None:
    first = store.create("first")
    second = store.create("second", blockers=[first])
    task = store.claim(first, "ann").task
    assert (task.status, task.assignee) == ("in_progress", "ann")
    with pytest.raises(InvalidTaskError, match="already claimed by ann"):
        store.claim(first, "bob")
    with pytest.raises(InvalidTaskError, match=f"waits on {first}"):
        store.claim(second, "bob")
    with pytest.raises(UnknownTaskError):
        store.claim("t-zzzzz", "bob")
    assert [t.id for t in store.list("in_progress")] == [first]


def test_postgresql_schema_is_versioned_and_a_newer_one_refused(pg_cluster) -> None:
    import psycopg

    from ollie_nb.tasks._pg_schema import PG_SCHEMA_VERSION

    url = pg_cluster.new_database()
    open_store(url).close()
    open_store(url).close()  # opening again must not migrate again
    with psycopg.connect(url, autocommit=True) as conn:
        versions = conn.execute("SELECT version FROM schema_version ORDER BY 1").fetchall()
        assert versions == [(v,) for v in range(1, PG_SCHEMA_VERSION + 1)]
        conn.execute("INSERT INTO schema_version VALUES (%s, 'later')", (PG_SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer than this ollie-tasks understands"):
        open_store(url)
    with pytest.raises(StoreError, match="no task tables"):
        open_store(pg_cluster.new_database(), create=False)
