"""OfflineBackend: scripted turns, function mode and the demo planner."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ollie_nb.llm import (
    Backend,
    Done,
    Message,
    OfflineBackend,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingReady,
    ToolCall,
    ToolCallsReady,
    ToolDef,
    Usage,
    UsageReport,
    is_step_prompt,
    step_prompt_task_id,
)
from tests.conftest import MakeCore
from tests.support.llm_fake_provider import collect

PLAN = ToolDef(
    "reasoning_plan",
    "Break a goal into ordered steps.",
    {
        "type": "object",
        "properties": {
            "goal": {"type": "string"},
            "steps": {"type": "array", "items": {"type": "object"}},
        },
        "required": ["goal", "steps"],
    },
)
TASK_UPDATE = ToolDef("task_update", "Update a task.", {"type": "object"})


def run(backend: OfflineBackend, messages: list[Message], tools=()) -> list[StreamEvent]:
    return collect(lambda: backend.chat_stream(messages, list(tools)))


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def calls_of(events: list[StreamEvent]) -> tuple[ToolCall, ...]:
    return next((e.tool_calls for e in events if isinstance(e, ToolCallsReady)), ())


def plan_args(prompt: str) -> dict[str, Any]:
    (call,) = calls_of(run(OfflineBackend(), [Message.user(prompt)], [PLAN]))
    assert call.name == "reasoning_plan"
    return json.loads(call.arguments)


@pytest.mark.anyio
async def test_is_a_backend_with_offline_identity():
    b = OfflineBackend()
    assert isinstance(b, Backend)
    assert (b.name, b.model) == ("offline", "offline-planner")
    assert (await b.models()) == ["offline-planner"]
    assert (await b.context_length()) is None
    b.set_model("other")
    assert b.model == "other"
    assert repr(b) == "OfflineBackend(model='other', mode='demo')"


def test_scripted_turns_in_order_then_a_clear_end():
    b = OfflineBackend(
        turns=[
            "first answer",
            [{"name": "get_time", "arguments": {"city": "Oslo"}}],
            [ToolCall("x1", "read", '{"path": "a.txt"}'), {"name": "echo", "arguments": "[1]"}],
        ]
    )
    first = run(b, [Message.user("hi")])
    assert text_of(first) == "first answer"
    assert [e.text for e in first if isinstance(e, TextDelta)] == ["first ", "answer"]
    assert first[-2:] == [UsageReport(Usage(1, 2)), Done("stop")]

    history = [Message.user("hi"), Message.assistant("first answer"), Message.user("time?")]
    second = run(b, history)
    assert calls_of(second) == (ToolCall("call_1_0", "get_time", '{"city": "Oslo"}'),)
    assert second[-1] == Done("tool_calls")

    third = run(b, [Message.user("go")])
    assert calls_of(third) == (
        ToolCall("x1", "read", '{"path": "a.txt"}'),
        ToolCall("call_0_1", "echo", "[1]"),
    )
    assert text_of(run(b, [Message.user("more")])) == (
        "The offline script has no more replies (it had 3); this request got none."
    )


def test_function_mode_sees_messages_and_tools_sync_and_async():
    seen: list[tuple[int, list[str]]] = []

    def reply(messages: list[Message], tools: list[ToolDef]) -> str:
        seen.append((len(messages), [t.name for t in tools]))
        return f"you said {messages[-1].content}"

    async def areply(messages: list[Message], tools: list[ToolDef]) -> list[dict[str, Any]]:
        return [{"name": "ping", "arguments": {}}]

    assert text_of(run(OfflineBackend(reply), [Message.user("x")], [PLAN])) == "you said x"
    assert seen == [(1, ["reasoning_plan"])]
    assert calls_of(run(OfflineBackend(areply), [Message.user("x")])) == (
        ToolCall("call_0_0", "ping", "{}"),
    )


def test_bad_construction_and_bad_turns_are_clear():
    with pytest.raises(TypeError, match="turns="):
        OfflineBackend(["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not both"):
        OfflineBackend(lambda m, t: "x", turns=["a"])
    with pytest.raises(TypeError, match="tool call"):
        run(OfflineBackend(turns=[[42]]), [Message.user("x")])


def test_demo_planner_bulleted_list_chains_steps():
    args = plan_args("Bake bread:\n- buy flour\n* knead the dough\n• bake it")
    assert args == {
        "goal": "Bake bread",
        "steps": [
            {"title": "buy flour", "body": "", "after": []},
            {"title": "knead the dough", "body": "", "after": [0]},
            {"title": "bake it", "body": "", "after": [1]},
        ],
    }


def test_demo_planner_numbered_list_with_after_and_independent():
    prompt = (
        "Goal: ship release 2\n"
        "\n"
        "1. write the code\n"
        "2) write the docs (independent)\n"
        "3. run the tests\n"
        "   on every platform\n"
        "4. publish (after 1, 3)\n"
        "5. tweet about it (after none)\n"
        "\n"
        "Thanks!"
    )
    assert plan_args(prompt) == {
        "goal": "ship release 2",
        "steps": [
            {"title": "write the code", "body": "", "after": []},
            {"title": "write the docs", "body": "", "after": []},
            {"title": "run the tests", "body": "on every platform", "after": [1]},
            {"title": "publish", "body": "", "after": [0, 2]},
            {"title": "tweet about it", "body": "", "after": []},
        ],
    }


def test_demo_planner_summarises_the_plan_tool_result():
    b = OfflineBackend()
    prompt = Message.user("Clean the house\n- kitchen\n- bathroom")
    (call,) = calls_of(run(b, [prompt], [PLAN]))
    result = (
        "Plan: Clean the house\n1. kitchen\n2. bathroom\n   after: step 1\n\n"
        "Plan saved by sheet(): 2 steps.\n"
    )
    history = [prompt, Message.assistant("", [call]), Message.tool(call.id, result, call.name)]
    events = run(b, history, [PLAN])
    assert text_of(events) == (
        "Planned 2 steps for: Clean the house.\n\nPlan saved by sheet(): 2 steps."
    )
    assert len([e for e in events if isinstance(e, TextDelta)]) > 5  # streamed in word chunks
    assert events[-1] == Done("stop")


def test_demo_planner_without_plan_tool_writes_the_plan_as_text():
    text = text_of(run(OfflineBackend(), [Message.user("Trip\n- pack\n- go (after 1)")]))
    assert (
        text
        == "Plan for: Trip (no reasoning_plan tool is available to record it)\n1. pack\n2. go (after 1)"
    )


def test_other_prompts_get_help():
    events = run(OfflineBackend(), [Message.user("What is 2+2?")], [PLAN])
    assert calls_of(events) == ()
    assert "offline model" in text_of(events)
    assert "bulleted or numbered list" in text_of(events)


def test_step_prompt_detection_rule():
    assert is_step_prompt("Step 2: write tests")
    assert is_step_prompt("Goal: ship it\n\nStep 1/3: write code")
    assert is_step_prompt("Write code [task t-1a2b]")
    assert is_step_prompt("Write code (id: t-9)")
    assert not is_step_prompt("Steps are hard\n- a\n- b")
    assert step_prompt_task_id("Step 1: x [task t-1a2b]") == "t-1a2b"
    assert step_prompt_task_id("do it (id: t-77)") == "t-77"
    assert step_prompt_task_id("Step 1: x (after: q1)") is None


def test_step_prompt_with_task_id_updates_the_task_then_answers():
    b = OfflineBackend()
    tools = [PLAN, TASK_UPDATE]
    prompt = Message.user("Step 2/3: write the tests [task t-4f2a] (after: q1)")
    (call,) = calls_of(run(b, [prompt], tools))
    assert (call.name, json.loads(call.arguments)) == (
        "task_update",
        {"id": "t-4f2a", "status": "done"},
    )
    history = [prompt, Message.assistant("", [call]), Message.tool(call.id, "updated t-4f2a")]
    events = run(b, history, tools)
    assert calls_of(events) == ()
    assert text_of(events) == (
        "Completed step: write the tests. "
        "(The offline model does no real work; it only walks the plan.)"
    )


def test_step_prompt_without_task_tool_or_id_answers_directly():
    b = OfflineBackend()
    queued = Message.user("Goal: tidy up\n\nStep 1: sort the books\nbody text")
    assert calls_of(run(b, [queued], [PLAN, TASK_UPDATE])) == ()
    assert text_of(run(b, [queued], [PLAN])).startswith("Completed step: sort the books.")
    with_id = Message.user("Step 1: sort the books (id: t-1)")
    assert text_of(run(b, [with_id], [PLAN])).startswith("Completed step: sort the books.")


def test_queue_plan_step_prompts_are_acknowledged_by_title():
    first = "Goal: tidy up\n\nStep 1 of 2 [q1]: sort the books\nby colour"
    second = "Step 2 of 2 [q2]: shelve them\n(after: q1)"
    b = OfflineBackend()
    answers = [text_of(run(b, [Message.user(p)], [PLAN])) for p in (first, second)]
    assert [a.split(". (")[0] for a in answers] == [
        "Completed step: sort the books",
        "Completed step: shelve them",
    ]


def test_same_input_gives_the_same_output():
    messages = [Message.user("Goal\n- one\n- two (independent)")]
    first = run(OfflineBackend(), messages, [PLAN])
    assert run(OfflineBackend(), messages, [PLAN]) == first
    b = OfflineBackend()
    assert run(b, messages, [PLAN]) == run(b, messages, [PLAN]) == first
    help_a = run(OfflineBackend(), [Message.user("hello")])
    assert help_a == run(OfflineBackend(), [Message.user("hello")])


@pytest.mark.anyio
async def test_cancellation_stops_a_slow_stream_promptly():
    b = OfflineBackend(turns=["word " * 200], chunk_delay=0.05)

    async def main() -> int:
        got: list[StreamEvent] = []

        async def consume() -> None:
            async for e in b.chat_stream([Message.user("x")]):
                got.append(e)

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.12)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return len(got)

    assert 1 <= (await asyncio.wait_for(main(), 2)) < 10


def test_a_scripted_thinking_reply_streams_its_reasoning_first_and_its_blocks_whole():
    block = ThinkingBlock("thinking", "Plan the answer.", "c2ln")
    b = OfflineBackend(turns=[Message.assistant("Done.", thinking=[block])])
    events = run(b, [Message.user("go")])
    assert events[0] == ReasoningDelta("Plan the answer.")
    assert text_of(events) == "Done."
    assert ThinkingReady((block,)) in events


async def reply_to(make_core: MakeCore, prompt: str) -> str:
    """The offline model's reply to a plan prompt, after a real core's reasoning_plan answered."""
    from ollie_nb.core import AgentConfig

    core = await make_core(OfflineBackend(), agent=AgentConfig.from_dict({}))
    return (await core.submit(prompt)).reply


@pytest.mark.parametrize(
    ("items", "note", "steps"),
    [
        ("- a\n- b\n- c (after 7)", "item 3's (after 7): there is no step 7 (the list has 3)", 3),
        ("- a\n- b (after two)\n- c", "item 2's (after two): 'two' is not a step number", 3),
        (
            "- a\n- b (after 3)\n- c (after 2)",
            "item 2's (after 3): step 3 is not before it (waiting for it could make a cycle)",
            3,
        ),
        ("- a\n- b\n- (after 1)", "item 3 has no title: it is called 'Step 3'", 3),
    ],
)
@pytest.mark.anyio
async def test_the_demo_planner_says_which_dependencies_it_left_out_and_why(
    make_core, items, note, steps
):
    reply = await reply_to(make_core, f"Cook dinner\n{items}")
    assert reply.startswith(f"Planned {steps} steps for: Cook dinner.\n\nFrom your list:\n- "), (
        reply
    )
    assert note in reply


@pytest.mark.anyio
async def test_a_good_list_gets_no_notes(make_core):
    assert "From your list" not in await reply_to(
        make_core, "Cook dinner\n- a\n- b (after 1)\n- c (after step 1, 2)"
    )


@pytest.mark.anyio
async def test_a_refused_plan_is_reported_as_refused_not_as_planned(make_core):
    reply = await reply_to(make_core, "Big job\n" + "".join(f"- step {i}\n" for i in range(5000)))
    assert reply.startswith("The plan for Big job was refused: the plan has 5000 steps; "), reply
    assert "Planned" not in reply


def test_a_plan_in_context_only_is_said_once_the_warning_line_not_repeated():
    """The user sees the ⚠ line of the plan's warning; the reply does not say it again."""
    b = OfflineBackend()
    prompt = Message.user("Clean the house\n- kitchen\n- bathroom")
    (call,) = calls_of(run(b, [prompt], [PLAN]))
    warning = "warning: no plan backend: MCP server 'tasks' failed to connect (refused)"
    result = f"Plan: Clean the house\n1. kitchen\n2. bathroom\n\n{warning}; in context only."
    history = [prompt, Message.assistant("", [call]), Message.tool(call.id, result, call.name)]
    assert text_of(run(b, history, [PLAN])) == (
        "Planned 2 steps for: Clean the house.\n\n"
        "It was not saved: it lives in context only (the warning says why)."
    )
