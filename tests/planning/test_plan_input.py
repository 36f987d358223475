"""reasoning_plan refuses bad input with text the model can act on, and keeps working."""

from __future__ import annotations

import pytest

from ollie_nb.planning import (
    MAX_AFTER_PER_STEP,
    MAX_AFTER_TOTAL,
    MAX_STEPS,
    PlanStep,
    PlanValidationError,
    format_plan,
    parse_plan,
)
from ollie_nb.tools import Dispatcher, ReasoningServer

OK_STEP = {"title": "ok"}

BAD_INPUT = [
    ({}, "'goal' is required"),
    ({"steps": [OK_STEP]}, "'goal' is required"),
    ({"goal": "", "steps": [OK_STEP]}, "'goal' is required"),
    ({"goal": "   ", "steps": [OK_STEP]}, "'goal' is required"),
    ({"goal": 42, "steps": [OK_STEP]}, "'goal' must be a string, got a number"),
    ({"goal": ["g"], "steps": [OK_STEP]}, "'goal' must be a string, got a list"),
    ({"goal": "g" * 2001, "steps": [OK_STEP]}, "keep it under 2000"),
    ({"goal": "g"}, "'steps' is required"),
    ({"goal": "g", "steps": None}, "'steps' is required"),
    ({"goal": "g", "steps": "do it"}, "'steps' must be a list, got a string"),
    ({"goal": "g", "steps": {"title": "x"}}, "'steps' must be a list, got an object"),
    ({"goal": "g", "steps": []}, "'steps' is empty"),
    ({"goal": "g", "steps": [42]}, "step 1 must be an object"),
    ({"goal": "g", "steps": [OK_STEP, None]}, "step 2 must be an object"),
    ({"goal": "g", "steps": [{}]}, "step 1: 'title' is required (missing)"),
    ({"goal": "g", "steps": [{"title": ""}]}, "step 1: 'title' is required (empty)"),
    ({"goal": "g", "steps": [{"title": " \n "}]}, "step 1: 'title' is required (empty)"),
    ({"goal": "g", "steps": [{"title": 7}]}, "step 1: 'title' is required (a number)"),
    ({"goal": "g", "steps": [{"title": "t" * 501}]}, "move detail to 'body'"),
    ({"goal": "g", "steps": [{"title": "t", "body": 3}]}, "'body' must be a string"),
    ({"goal": "g", "steps": [{"title": "t", "body": "b" * 8001}]}, "the limit is 8000"),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": "0"}]},
        "step 2: 'after' must be a list",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": 0}]},
        "step 2: 'after' must be a list",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": ["0"]}]},
        "'after' entries must be integers",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": [True]}]},
        "'after' entries must be integers",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": [0.5]}]},
        "'after' entries must be integers",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": [1]}]},
        "step 2: 'after' refers to the step itself",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": [2]}, OK_STEP]},
        "step 2: 'after' index 2 is not an earlier step",
    ),
    (
        {"goal": "g", "steps": [{"title": "t", "after": [1]}, OK_STEP]},
        "the first step cannot wait",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": [-1]}]},
        "'after' index -1 is negative",
    ),
    (
        {"goal": "g", "steps": [OK_STEP, {"title": "t", "after": [99]}]},
        "'after' index 99 is not an earlier step",
    ),
    ({"goal": "g", "steps": [OK_STEP] * (MAX_STEPS + 1)}, f"the limit is {MAX_STEPS}"),
    (
        {"goal": "g", "steps": [{"title": "t", "body": "b" * 7999}] * 130},
        "characters of text; the limit is 1000000",
    ),
    ("not an object", "must be a JSON object"),
]


@pytest.mark.parametrize(("args", "expected"), BAD_INPUT)
@pytest.mark.anyio
async def test_bad_plan_input_is_refused_readably(args, expected):
    dispatcher = Dispatcher()
    dispatcher.add_server("reasoning", ReasoningServer())
    bad = await dispatcher.dispatch("reasoning", "reasoning_plan", args)
    good = await dispatcher.dispatch(
        "reasoning", "reasoning_plan", {"goal": "g", "steps": [OK_STEP]}
    )
    assert bad.is_error
    assert bad.text.startswith("error: ")
    assert expected in bad.text
    assert "\n" not in bad.text, "one line the model can act on"
    assert not good.is_error and "1. ok" in good.text  # the server keeps working


def test_lenient_inputs_are_accepted():
    goal, steps = parse_plan(
        {
            "goal": "  Écrire le rapport 📊  ",
            "steps": [
                "bare title",
                {"title": "  spaced\n  title  ", "body": None, "after": None},
                {"title": "dup", "after": [0, 1, 0, 1.0]},
            ],
        }
    )
    assert goal == "Écrire le rapport 📊"
    assert steps == [
        PlanStep("bare title"),
        PlanStep("spaced title"),
        PlanStep("dup", after=(0, 1)),
    ]


def test_format_plan_layout():
    steps = [PlanStep("A", "line one\nline two"), PlanStep("B", after=(0,))]
    text = format_plan("Goal", steps, ["t-1", "t-2"], "Plan saved.", goal_id="t-0")
    assert text == (
        "Plan: Goal  [t-0]\n"
        "1. [t-1] A\n"
        "   line one\n"
        "   line two\n"
        "2. [t-2] B\n"
        "   after: step 1 (t-1)\n"
        "\n"
        "Plan saved."
    )
    assert format_plan("Goal", steps, ["only-one"]).splitlines()[1] == "1. A"


@pytest.mark.anyio
async def test_reasoning_think_and_unknown_tool():
    server = ReasoningServer()
    ok, missing, unknown = (
        await server.call_tool("reasoning_think", {"thought": "hmm"}),
        await server.call_tool("reasoning_think", {}),
        await server.call_tool("reasoning_nope", {}),
    )
    assert ok.text == "ok" and not ok.is_error
    assert missing.is_error and "'thought' is required" in missing.text
    assert unknown.is_error and "unknown tool 'reasoning_nope'" in unknown.text


@pytest.mark.anyio
async def test_dispatcher_errors_never_raise():
    class Exploding:
        async def list_tools(self):
            raise RuntimeError("cannot list")

        async def call_tool(self, name, args):
            raise RuntimeError("kaboom")

        async def aclose(self):
            pass

    d = Dispatcher()
    d.add_server("x", Exploding())
    d.add_server("reasoning", ReasoningServer())
    unknown, exploding, not_dict, tools = (
        await d.dispatch("nope", "t", {}),
        await d.dispatch("x", "t", {}),
        await d.dispatch("reasoning", "reasoning_plan", ["not", "a", "dict"]),
        [t.name for t in await d.list_tools()],
    )
    assert unknown.is_error and "no tool server named 'nope'" in unknown.text
    assert exploding.is_error and "x.t failed: RuntimeError: kaboom" in exploding.text
    assert not_dict.is_error and "must be a JSON object" in not_dict.text
    assert tools == ["reasoning_think", "reasoning_plan"]  # the broken server is skipped


def _dense(n: int, per_step: int) -> dict:
    """n steps, each after the `per_step` steps before it."""
    steps = [{"title": f"s{i}", "after": list(range(max(0, i - per_step), i))} for i in range(n)]
    return {"goal": "g", "steps": steps}


def test_after_links_are_limited_per_step_with_the_step_named():
    """41 steps each after all earlier ones (the plan that kept dot busy 49 s) is refused."""
    everything_before = {
        "goal": "g",
        "steps": [{"title": f"s{i}", "after": list(range(i))} for i in range(41)],
    }
    with pytest.raises(PlanValidationError) as info:
        parse_plan(everything_before)
    assert str(info.value) == (
        "step 22: 'after' lists 21 steps; the limit is 20 per step: list only the steps it "
        "directly needs: a step after step 3 already waits for everything step 3 waits for"
    )
    assert MAX_AFTER_PER_STEP == 20
    _, steps = parse_plan(_dense(30, 20))  # exactly at the limit: accepted
    assert steps[29].after == tuple(range(9, 29))


def test_after_links_are_limited_per_plan():
    with pytest.raises(PlanValidationError) as info:
        parse_plan(_dense(200, 20))  # 20 per step after the first ones: 3,790 in all
    assert str(info.value) == (
        "the plan has 3790 'after' links in all; the limit is 3000: list only the steps it "
        "directly needs: a step after step 3 already waits for everything step 3 waits for"
    )
    assert MAX_AFTER_TOTAL == 3000
    _, steps = parse_plan(_dense(160, 20))  # 2,990 links: accepted
    assert sum(len(s.after) for s in steps) == 2990
