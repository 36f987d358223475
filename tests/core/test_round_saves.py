"""Saves within a turn, after tool rounds: at most a tenth of the time goes to them."""

from __future__ import annotations

import asyncio
import time

import pytest

from ollie_nb.core._conversation import SAVE_SHARE, RoundSaves

SAVE_TAKES = 0.02  # s: a big session's save


@pytest.mark.anyio
async def test_rounds_after_a_slow_save_share_one_deferred_save():
    saved: list[float] = []
    second = asyncio.Event()

    def save() -> None:
        saved.append(time.monotonic())
        if len(saved) == 1:
            time.sleep(SAVE_TAKES)  # the save's own work, not a wait
        else:
            second.set()

    rounds = RoundSaves(save)
    rounds.round_ended()  # the first round is saved at once
    assert len(saved) == 1
    for _ in range(3):  # three more rounds at once: one save, deferred, takes them along
        rounds.round_ended()
    assert len(saved) == 1
    await asyncio.wait_for(second.wait(), 5)
    assert len(saved) == 2
    assert saved[1] - saved[0] >= SAVE_SHARE * SAVE_TAKES * 0.9


@pytest.mark.anyio
async def test_a_deferred_save_is_made_at_once_before_a_history_is_replaced():
    """A worker's next step replaces its history: the deferred save that would take the
    last step's rounds along is made first (and only once), or those rounds never reach
    the file."""
    saved: list[str] = []
    rounds = RoundSaves(lambda: saved.append("save") or time.sleep(SAVE_TAKES))
    rounds.round_ended()
    rounds.round_ended()  # deferred: the first save was slow
    assert saved == ["save"]
    rounds.save_due()
    assert saved == ["save", "save"]
    rounds.save_due()  # nothing due: nothing saved
    await asyncio.sleep(SAVE_SHARE * SAVE_TAKES * 1.5)  # the cancelled deferral stays cancelled
    assert saved == ["save", "save"]


@pytest.mark.anyio
async def test_a_worker_given_its_next_step_makes_the_due_save_first(make_core):
    core = await make_core(autosave=True)
    child = core.subagents.spawn("w", "hello", notify=False)
    await child.until_idle()
    saved_with: list[int] = []  # how many messages the child held at each save

    def save() -> None:
        saved_with.append(len(child.conversation.history))
        time.sleep(SAVE_TAKES)  # a big session's save: the next round's save is deferred

    core.session.save = save  # type: ignore[method-assign]
    core.round_saves.round_ended()
    core.round_saves.round_ended()  # the child's last round: its save is deferred
    child.assign("the next step", core.spend.run(1))
    held = saved_with[0]
    assert held > 0 and saved_with == [held, held]  # made before the history was replaced
    assert child.conversation.history == []
