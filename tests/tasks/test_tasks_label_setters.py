"""Who set a label, as the store lists it, on both backends (the listing's own filter)."""

from __future__ import annotations

from ollie_nb.tasks import open_store
from ollie_nb.tasks._store import Caller


def test_a_listing_gives_who_set_each_label_on_both_backends(any_db):
    with open_store(str(any_db)) as store:
        goal = store.create("Goal", labels=("approved",), caller=Caller(user="alice"))
        plain = store.create("Plain", labels=("approved",))  # the shell: trusted, unnamed
        step = store.create("Step", parent=goal)
        listed = {t.id: t for t in store.list("all", setters=True)}
        assert dict(listed[goal].labels_by) == {"approved": "alice"}
        assert dict(listed[plain].labels_by) == {}
        assert dict(listed[step].labels_by) == {}
        by_label = store.list("all", label="approved", setters=True)
        assert {t.id: dict(t.labels_by) for t in by_label} == {
            goal: {"approved": "alice"},
            plain: {},
        }
        assert all(not t.labels_by for t in store.list("all"))  # only when asked
