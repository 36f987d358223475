"""An editor of a held plan stops listening for the plan's decisions once it is decided or its
widget is closed: no listener stays for the session.

A real NotebookRuntime with a real AgentCore on the offline model, review on (the fixture of
test_plan_editor_follows); no kernel.
"""

from __future__ import annotations

import pytest

from ollie_nb.notebook._runtime import NotebookRuntime
from tests.notebook.test_plan_editor_follows import _plain, editors, runtime

pytest.importorskip("ipywidgets")

__all__ = ["runtime"]  # the fixture, shared


def listening(rt: NotebookRuntime) -> int:
    """How many decision listeners the core's plans hold, once the loop ran what was asked."""
    return rt.call(_plain(lambda: len(rt.core.plans._listeners)))


def test_closing_an_undecided_editors_widget_releases_its_listener(runtime) -> None:
    before = listening(runtime)
    first, second = editors(runtime)
    assert listening(runtime) == before + 2
    first.widget.close()
    assert listening(runtime) == before + 1
    runtime.call(lambda: runtime.core.plans.approve(1))
    assert first.outcome == "" and not first.closed  # no longer told: nothing shows it
    assert second.closed and "approved" in second.outcome
    assert listening(runtime) == before


def test_a_decided_editor_releases_its_listener(runtime) -> None:
    before = listening(runtime)
    (editor,) = editors(runtime, 1)
    runtime.call(_plain(lambda: runtime.core.plans.discard(1)))
    assert editor.closed
    assert listening(runtime) == before
