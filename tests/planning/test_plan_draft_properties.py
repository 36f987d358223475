"""PlanDraft under edits in any order: no row lost or doubled, an order that respects every
edge whenever there is no cycle, and an edits() summary that agrees with the rows."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ollie_nb.planning import PlanDraft, PlanValidationError, parse_plan

TITLES = st.sampled_from(["spec", "build", "docs", "release", "new", "x y"])
NUMBER = st.integers(min_value=0, max_value=7)  # numbers past the end are refused
EDIT = st.one_of(
    st.tuples(st.just("title"), NUMBER, TITLES),
    st.tuples(st.just("body"), NUMBER, TITLES),
    st.tuples(st.just("add"), TITLES, st.lists(NUMBER, max_size=2), NUMBER),
    st.tuples(st.just("delete"), NUMBER),
    st.tuples(st.just("move"), NUMBER, NUMBER),
    st.tuples(st.just("depend"), NUMBER, NUMBER),
    st.tuples(st.just("undepend"), NUMBER, NUMBER),
    st.tuples(st.just("goal"), TITLES),
)


def chain(n: int) -> PlanDraft:
    """A plan of `n` steps, each after the one before."""
    steps = [{"title": f"s{i}", "after": [i - 1] if i else []} for i in range(n)]
    _, parsed = parse_plan({"goal": "ship", "steps": steps})
    return PlanDraft.from_plan("ship", parsed, [f"t{i}" for i in range(n)])


def apply(draft: PlanDraft, edit: tuple, alive: set[int]) -> None:
    """One edit, kept in `alive` (the keys that should be rows); a refused one (a step that
    is not there, itself as blocker) changes nothing."""
    kind, *args = edit
    before = draft.to_dict()
    try:
        if kind == "add":
            key = draft.rows[draft.add(args[0], after=args[1], at=args[2]) - 1].key
            assert key not in alive and key not in {r.key for r in draft.original}
            alive.add(key)
        elif kind == "delete":
            alive.remove(draft.delete(args[0]).key)
        else:
            op = {
                "title": draft.set_title,
                "body": draft.set_body,
                "move": draft.move,
                "depend": draft.add_dependency,
                "undepend": draft.remove_dependency,
                "goal": draft.set_goal,
            }[kind]
            op(*args)
    except PlanValidationError:
        assert draft.to_dict() == before


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=1, max_value=5), st.lists(EDIT, max_size=12))
def test_edits_in_any_order_keep_every_row_once_and_the_summary_true(n, edits) -> None:
    draft = chain(n)
    alive = {r.key for r in draft.rows}
    for edit in edits:
        apply(draft, edit, alive)
    keys = [r.key for r in draft.rows]
    original = {r.key for r in draft.original}
    assert len(keys) == len(set(keys)) and set(keys) == alive  # no row doubled or lost
    assert PlanDraft.from_dict(draft.to_dict()) == draft
    lines = draft.edits()
    assert draft.changed == bool(lines)
    gone = [line for line in lines if line.startswith("deleted step ")]
    new = [line for line in lines if line.startswith("added step ")]
    assert len(gone) == len(original - set(keys))
    assert new == [
        f"added step {i} ({r.title!r})"
        for i, r in enumerate(draft.rows, 1)
        if r.key not in original
    ]
    if draft.problems() and "cycle" in draft.problems()[0]:
        return
    order = [r.key for r in draft.ordered_rows()]
    assert sorted(order) == sorted(keys)
    seen: set[int] = set()
    for row in draft.ordered_rows():
        assert set(row.after) & set(keys) <= seen  # after everything it waits for
        seen.add(row.key)


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=1, max_value=5), st.lists(TITLES, min_size=1, max_size=3))
def test_deleted_rows_are_never_reported_as_renamed_added_ones(n, titles) -> None:
    draft = chain(n)
    for _ in range(n):
        draft.delete(len(draft))
    for title in titles:
        draft.add(title)
    lines = draft.edits()
    assert not any("title changed" in line for line in lines)
    assert sum(line.startswith("deleted step ") for line in lines) == n
    assert sum(line.startswith("added step ") for line in lines) == len(titles)
