"""A step's state on its own: what each state means to the parts that decide on it, and the
word a server uses read in any case and spacing (an unknown word shown as it came)."""

from __future__ import annotations

import pytest

from ollie_nb.planning import StepState, read_state, state_label

S = StepState
# state: (is_finished, is_open, is_active, is_failed, unblocks, is_closed)
MEANINGS = {
    S.OPEN: (False, True, False, False, False, False),
    S.IN_PROGRESS: (False, False, True, False, False, False),
    S.DONE: (True, False, False, False, True, True),
    S.FAILED: (False, False, False, True, False, True),
    S.CANCELLED: (True, False, False, False, False, True),
    S.BLOCKED: (False, False, False, False, False, False),
    S.DEFERRED: (False, False, False, False, False, False),
    S.UNKNOWN: (False, False, False, False, False, False),
}


@pytest.mark.parametrize("state", list(StepState))
def test_what_each_state_means(state: StepState) -> None:
    seen = (
        state.is_finished,
        state.is_open,
        state.is_active,
        state.is_failed,
        state.unblocks,
        state.is_closed,
    )
    assert seen == MEANINGS[state]
    assert str(state) == state.value


@pytest.mark.parametrize(
    ("word", "state"),
    [
        ("open", S.OPEN),
        ("  Pending ", S.OPEN),
        ("In Progress", S.IN_PROGRESS),
        ("in-progress", S.IN_PROGRESS),
        ("IN_PROGRESS", S.IN_PROGRESS),
        ("on  hold", S.DEFERRED),
        ("closed", S.DONE),
        ("Won't fix", S.UNKNOWN),
        ("wontfix", S.CANCELLED),
        ("errored", S.FAILED),
        ("waiting", S.BLOCKED),
        ("", S.UNKNOWN),
        (None, S.UNKNOWN),
        (S.FAILED, S.FAILED),
        (S.UNKNOWN, S.UNKNOWN),
    ],
)
def test_a_servers_word_is_read_in_any_case_and_spacing(word: object, state: StepState) -> None:
    assert read_state(word) is state


@pytest.mark.parametrize(
    ("word", "label"),
    [
        ("In Progress", "in_progress"),
        (S.DONE, "done"),
        ("triaged", "triaged"),
        (None, ""),
        ("", ""),
        (S.UNKNOWN, ""),
        (3, "3"),
    ],
)
def test_a_state_is_shown_by_its_own_word_else_the_servers(word: object, label: str) -> None:
    assert state_label(word) == label
