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
