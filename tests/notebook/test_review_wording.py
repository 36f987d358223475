"""What the user reads after a plan is held or queued: the user's words in the reply, the
model's instruction only in the tool result; a held plan's editor under the reply, so the
approval's turn (shown in the editor) comes after what was said before it.

The offline model, a real AgentCore; the turn's events replayed into the renderer.
"""

from __future__ import annotations

from typing import Any

import pytest

from ollie_nb.core import AgentCore, Event, PlanMade, TurnEnded
from ollie_nb.notebook._display import Reply
from ollie_nb.notebook._render import Settings, TurnView
from ollie_nb.planning import held_message
from ollie_nb.planning.prompts import QUEUED_MESSAGE

CHAIN = "Ship it\n- Prepare\n- Build (after 1)\n- Release (after 2)"
FOR_THE_MODEL = ("Stop here", "awaits the user's review", "do not execute")


async def run(core: AgentCore, prompt: str) -> list[Event]:
    events: list[Event] = []
    await core.submit(prompt, events.append)
    return events


def tool_results(core: AgentCore) -> list[str]:
    return [m.content for m in core.session.history if m.role == "tool"]


@pytest.mark.anyio
async def test_a_held_plan_is_told_to_the_user_in_the_users_words(make_core: Any) -> None:
    core = await make_core()
    core.plans.review = True
    events = await run(core, CHAIN)
    reply = next(e for e in events if isinstance(e, TurnEnded)).reply
    assert reply.endswith(
        "Plan 1 is waiting for your review: approve, edit or send it back below."
    ), reply
    assert not any(words in reply for words in FOR_THE_MODEL), reply
    assert tool_results(core)[-1].splitlines()[-1] == held_message(1)  # the model's own


@pytest.mark.anyio
async def test_a_queued_plan_is_told_to_the_user_in_the_users_words(make_core: Any) -> None:
    core = await make_core(queue_fallback=True)
    events = await run(core, CHAIN)
    reply = next(e for e in events if isinstance(e, TurnEnded)).reply  # the plan's turn
    assert reply.endswith("Its 3 steps are queued: each runs as a turn of its own, in order.")
    assert not any(words in reply for words in FOR_THE_MODEL), reply
    assert QUEUED_MESSAGE.format(n=3) in tool_results(core)[0]


@pytest.mark.anyio
async def test_a_held_plans_editor_is_shown_under_the_reply(make_core: Any) -> None:
    core = await make_core()
    core.plans.review = True
    events = await run(core, CHAIN)
    shown: list[Any] = []
    editor = object()  # what the review callable makes: the editor, in a notebook
    view = TurnView(Settings(), shown.append, _live(shown), review=lambda record: editor)
    for event in events:
        view(event)
    view.finish()
    assert any(isinstance(e, PlanMade) and e.record.held for e in events)
    replies = [i for i, out in enumerate(shown) if isinstance(out, Reply)]
    assert replies and shown.index(editor) > replies[-1], shown
    assert shown[-1] is editor  # the last output, so a decision's turn follows everything
    assert "waiting for your review" in shown[replies[-1]].markdown


def _live(shown: list[Any]) -> Any:
    def make(obj: Any) -> Any:
        index = len(shown)
        shown.append(obj)
        return lambda new: shown.__setitem__(index, new)

    return make
