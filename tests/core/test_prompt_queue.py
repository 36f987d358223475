"""The agent's prompt queue on its own: order, a step's place, removal, injected texts, notes."""

from __future__ import annotations

from ollie_nb.core._queue import PromptQueue
from ollie_nb.planning import Origin, QueuedPrompt
from ollie_nb.planning._steps import StepRef
from ollie_nb.planning.prompts import NOTES_HEADER


def step(plan: int, step_id: str) -> QueuedPrompt:
    ref = StepRef(plan=plan, index=0, total=1, step_id=step_id, kind="queue")
    return QueuedPrompt(f"work {step_id}", Origin.PLAN, ref)


def test_items_are_worked_in_order_and_put_first_goes_before_all() -> None:
    queue = PromptQueue()
    assert not queue and len(queue) == 0 and queue.pop() is None
    assert queue.put("a") == 1
    assert queue.put(QueuedPrompt("b", Origin.WATCH)) == 2
    queue.put_first(QueuedPrompt("first", Origin.INJECTED))
    assert queue and len(queue) == 3
    assert queue.texts == ["first", "a", "b"]
    assert [i.origin for i in queue.items] == [Origin.INJECTED, Origin.USER, Origin.WATCH]
    assert [queue.pop().text for _ in range(3)] == ["first", "a", "b"]  # type: ignore[union-attr]
    assert queue.pop() is None


def test_an_item_goes_before_its_plans_first_step_or_last() -> None:
    queue = PromptQueue()
    queue.put("user")
    queue.put(step(1, "q1"))
    queue.put(step(2, "q1"))
    queue.put(step(2, "q2"))
    queue.put_before_plan(QueuedPrompt("review 2"), plan=2)
    queue.put_before_plan(QueuedPrompt("review 3"), plan=3)
    assert queue.texts == ["user", "work q1", "review 2", "work q1", "work q2", "review 3"]


def test_remove_takes_a_queued_item_and_says_when_it_is_not_queued() -> None:
    queue = PromptQueue()
    first, item, last = QueuedPrompt("a"), QueuedPrompt("b"), QueuedPrompt("c")
    for queued in (first, item, last):
        queue.put(queued)
    assert queue.remove(item) is True
    assert queue.items == [first, last]
    assert queue.remove(item) is False
    assert queue.items == [first, last]


def test_clear_and_drop_say_how_many_went() -> None:
    queue = PromptQueue()
    for text in ["a", "bb", "c", "dd"]:
        queue.put(text)
    assert queue.drop(lambda item: len(item.text) == 1) == 2
    assert queue.texts == ["a", "c"]
    assert queue.clear() == 2
    assert queue.texts == [] and queue.clear() == 0


def test_withdraw_takes_the_first_of_that_origin_and_text_only() -> None:
    queue = PromptQueue()
    queue.put(QueuedPrompt("note", Origin.USER))
    queue.put(QueuedPrompt("note", Origin.SUBAGENT))
    queue.put(QueuedPrompt("note", Origin.SUBAGENT))
    queue.put(QueuedPrompt("other", Origin.SUBAGENT))
    queue.withdraw(Origin.SUBAGENT, "note")
    assert [(i.origin, i.text) for i in queue.items] == [
        (Origin.USER, "note"),
        (Origin.SUBAGENT, "note"),
        (Origin.SUBAGENT, "other"),
    ]
    queue.withdraw(Origin.WATCH, "note")
    assert len(queue) == 3


def test_has_step_knows_the_queued_steps() -> None:
    queue = PromptQueue()
    queue.put("no step")
    queue.put(step(1, "q2"))
    assert queue.has_step("q2")
    assert not queue.has_step("q1")


def test_injected_texts_are_taken_once() -> None:
    queue = PromptQueue()
    assert queue.take_injected() == []
    queue.inject("one")
    queue.inject("two")
    assert queue.take_injected() == ["one", "two"]
    assert queue.take_injected() == []


def test_notes_are_appended_to_the_next_prompt_only() -> None:
    queue = PromptQueue()
    queue.note("n1")
    queue.note("n2")
    assert queue.with_notes("p") == "p" + NOTES_HEADER + "n1\nn2"
    assert queue.with_notes("p") == "p"
    assert PromptQueue().with_notes("q") == "q"
