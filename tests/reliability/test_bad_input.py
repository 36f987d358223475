"""Bad input of every kind: reasoning_plan arguments, agent JSON files, %ollie lines.

Each is refused with one readable line (tool error text for the model, a UsageError for
the notebook user) and everything keeps working: the next call, the next cell.
"""

from __future__ import annotations

import json
import math
import textwrap
import xml.etree.ElementTree as ET

import pytest

from ollie_nb.core import Notice, ToolFinished
from ollie_nb.core._sessions import load_session
from ollie_nb.llm import OfflineBackend, OpenAIBackend, ToolCall
from ollie_nb.planning import NO_BACKEND, plan_svg
from ollie_nb.tools import Dispatcher, ReasoningServer, ToolResult
from tests.support.agents import assert_consistent, kernel_env
from tests.support.kernel_harness import Kernel
from tests.support.llm_fake_provider import FAKE_KEY, Reply

OK = {"title": "ok"}

# Cases tests/planning/test_plan_input.py does not have: other wrong types, other bad `after`s.
# Each with the whole line the model reads.
STEP_SHAPE = "must be an object with 'title', 'body', 'after'"
AFTER_INTEGERS = "'after' entries must be integers (0-based step indexes), got"
PLAN_ARGS = [
    ({"goal": {"text": "g"}, "steps": [OK]}, "'goal' must be a string, got an object"),
    ({"goal": True, "steps": [OK]}, "'goal' must be a string, got a boolean"),
    (
        {"goal": None, "steps": [OK]},
        "'goal' is required: one sentence saying what the plan achieves",
    ),
    ({"goal": "g", "steps": 3}, "'steps' must be a list, got a number"),
    ({"goal": "g", "steps": True}, "'steps' must be a list, got a boolean"),
    ({"goal": "g", "steps": [["a"]]}, f"step 1 {STEP_SHAPE}; got a list"),
    ({"goal": "g", "steps": [OK, OK, 3.5]}, f"step 3 {STEP_SHAPE}; got a number"),
    ({"goal": "g", "steps": [{"title": None}]}, "step 1: 'title' is required (missing)"),
    ({"goal": "g", "steps": [{"title": ["a"]}]}, "step 1: 'title' is required (a list)"),
    ({"goal": "g", "steps": [{"title": {"t": 1}}]}, "step 1: 'title' is required (an object)"),
    (
        {"goal": "g", "steps": [{"title": "t", "body": ["x"]}]},
        "step 1: 'body' must be a string, got a list",
    ),
    (
        {"goal": "g", "steps": [{"title": "t", "body": False}]},
        "step 1: 'body' must be a string, got a boolean",
    ),
    (
        {"goal": "g", "steps": [OK, {"title": "t", "after": {"0": True}}]},
        "step 2: 'after' must be a list of 0-based indexes of earlier steps, got an object",
    ),
    (
        {"goal": "g", "steps": [OK, {"title": "t", "after": [None]}]},
        f"step 2: {AFTER_INTEGERS} None",
    ),
    ({"goal": "g", "steps": [OK, {"title": "t", "after": [[0]]}]}, f"step 2: {AFTER_INTEGERS} [0]"),
    (
        {"goal": "g", "steps": [OK, {"title": "t", "after": [math.nan]}]},
        f"step 2: {AFTER_INTEGERS} nan",
    ),
    (
        {"goal": "g", "steps": [OK, {"title": "t", "after": [math.inf]}]},
        f"step 2: {AFTER_INTEGERS} inf",
    ),
    (
        {"goal": "g", "steps": [OK, {"title": "t", "after": ["x" * 5000]}]},
        f"step 2: {AFTER_INTEGERS} 'xxxxxxxxxxxxxxxxxxxxxx…",
    ),
    (
        {"goal": "g", "steps": [OK, {"title": "t", "after": [1e300]}]},
        "step 2: 'after' index 1e+300 is not an earlier step; "
        "a step may only wait for steps before it (0 to 0)",
    ),
    (
        {"goal": "g", "steps": [OK, {"title": "t", "after": [10**40]}]},
        "step 2: 'after' index 10000000000000000000000… is not an earlier step; "
        "a step may only wait for steps before it (0 to 0)",
    ),
    (
        {"goal": "g", "steps": [OK, OK, {"title": "t", "after": [0, 2]}]},
        "step 3: 'after' refers to the step itself (2)",
    ),
]


@pytest.mark.parametrize(("args", "expected"), PLAN_ARGS)
@pytest.mark.anyio
async def test_bad_plan_arguments_are_refused_in_one_line(args, expected):
    dispatcher = Dispatcher()
    dispatcher.add_server("reasoning", ReasoningServer())
    bad = await dispatcher.dispatch("reasoning", "reasoning_plan", args)
    good = await dispatcher.dispatch("reasoning", "reasoning_plan", {"goal": "g", "steps": [OK]})
    assert bad == ToolResult(f"error: {expected}", is_error=True)
    assert good == ToolResult("Plan: g\n1. ok\n\n" + NO_BACKEND)


def call(name: str, arguments: str, call_id: str) -> ToolCall:
    return ToolCall(call_id, name, arguments)


@pytest.mark.anyio
async def test_raw_arguments_the_model_might_send(make_core, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    turns = [
        [
            call("reasoning_plan", "null", "null"),
            call("reasoning_plan", "42", "number"),
            call("reasoning_plan", '"make a plan"', "string"),
            call(
                "reasoning_plan",
                '{"goal": "g", "steps": [{"title": "a"}, {"title": "b", "after": [NaN]}]}',
                "nan",
            ),
            call("reasoning_plan", deep, "deep"),
            call("reasoning_think", '{"thought": 123}', "think"),
            call(
                "reasoning_plan", '{"goal": "g", "steps": ["a", "b"], "priority": "high"}', "extra"
            ),
        ],
        "done",
        "next",
    ]
    core = await make_core(OfflineBackend(turns=turns), autosave=True, start=False)

    async def scenario():
        async with core:
            events: list = []
            first = await core.submit("go", events.append)
            second = await core.submit("again")
            return first, second, events

    first, second, events = await scenario()
    results = {e.id: e.result for e in events if isinstance(e, ToolFinished)}
    assert (
        results["null"] == "error: arguments of reasoning_plan must be a JSON object, got NoneType"
    )
    assert results["number"] == "error: arguments of reasoning_plan must be a JSON object, got int"
    assert results["string"] == "error: arguments of reasoning_plan must be a JSON object, got str"
    assert results["nan"] == f"error: step 2: {AFTER_INTEGERS} nan"
    # The parser's words for too deep a nesting differ across Python versions.
    assert results["deep"].startswith("error: arguments of reasoning_plan are not valid JSON (")
    assert results["deep"].endswith("); send one JSON object")
    assert results["think"] == "error: 'thought' is required: a non-empty string"
    # Unknown keys are ignored: the plan is made as if they were not there.
    assert results["extra"] == f"Plan: g\n1. a\n2. b\n\n{NO_BACKEND}"
    assert all("\n" not in t for k, t in results.items() if k != "extra")
    assert first.reply == "done" and second.reply == "next"
    assert_consistent(core.session.history)


@pytest.mark.anyio
async def test_lone_surrogates_in_arguments_do_not_poison_the_session(
    make_core, tmp_path, provider
):
    # "\ud800" is a legal JSON escape but no UTF-8 text: a model can send it, and the
    # plan text then carries it into the history, the saved session and the next request.
    plan = '{"goal": "ship \\ud800 it", "steps": [{"title": "emoji \\ud83d\\ude00"}, {"title": "half \\udfff"}]}'
    core = await make_core(
        OfflineBackend(turns=[[call("reasoning_plan", plan, "p")], "done"]),
        autosave=True,
        start=False,
    )

    async def scenario():
        async with core:
            first = await core.submit("plan it")
            saved = core.session.save()
            text = "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": "fine"}}]})
            provider.queue(Reply(chunks=[text.encode() + b"\n\n", b"data: [DONE]\n\n"]))
            core.set_backend(OpenAIBackend("m", base_url=provider.url + "/v1", api_key=FAKE_KEY))
            events: list = []
            second = await core.submit("next", events.append)
            return first, saved, second, events

    first, saved, second, events = await scenario()
    assert first.reply == "done"
    assert saved is not None and load_session(saved.stem, saved.parent).id
    assert not [e.text for e in events if isinstance(e, Notice) and e.level == "error"]
    assert second.reply == "fine"
    sent = json.dumps(provider.requests[-1].body)
    assert "emoji \\ud83d\\ude00" in sent  # the pair survives, as the emoji it encodes
    assert_consistent(core.session.history)


@pytest.mark.anyio
async def test_control_characters_in_a_plan_draw_as_valid_svg():
    server = ReasoningServer()
    result, record = (
        await server.call_tool(
            "reasoning_plan",
            {
                "goal": "nul \x00 bell \x07",
                "steps": [{"title": "tab\tform\x0cfeed", "body": "esc \x1b[31m red"}],
            },
        ),
        server.plans[-1],
    )
    assert not result.is_error
    svg = plan_svg(record.goal, record.steps)
    assert ET.fromstring(svg).tag.endswith("svg")


# -- in a real kernel ---------------------------------------------------------------


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    base = tmp_path_factory.mktemp("bad-input")
    k = Kernel(str(base), kernel_env(base))
    k.base = base
    assert k.run("%load_ext ollie_nb").error is None
    assert k.run("%ollie status").error is None  # the runtime is up
    yield k
    k.shutdown()


def assert_usage_error(kernel, line: str, expected: str, *, whole: bool = True) -> None:
    """`line` fails with exactly the one line `UsageError: expected` (or one starting with it),
    no traceback, and the kernel answers the next cell."""
    run = kernel.run(line)
    err = run.stderr()
    assert run.error is None, run.error
    if whole:
        assert err == f"UsageError: {expected}\n", f"{line!r} gave: {err or run.text()!r}"
    else:
        assert err.startswith(f"UsageError: {expected}"), f"{line!r} gave: {err or run.text()!r}"
        assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err + run.text()
    alive = kernel.run("print(6 * 7)")
    assert alive.text().strip() == "42" and alive.error is None


# Each with what follows `%ollie: <path>` in the error line.
AGENT_FILES = [
    # Python's JSON parser words this one differently across versions: the start is checked
    ("trailing-comma", '{"prompt": "x",\n}', ":2:1: invalid JSON: "),
    ("empty", "", ":1:1: invalid JSON: Expecting value"),
    ("list", '["prompt"]', ": the top level must be a JSON object"),
    ("max-tokens-string", '{"maxTokens": "100"}', ": 'maxTokens' must be a whole number"),
    ("negative-temperature", '{"temperature": -1}', ": 'temperature' must be at least 0"),
    ("zero-plan-timeout", '{"planTimeout": 0}', ": 'planTimeout' must be at least 0.1"),
    ("zero-max-steps", '{"maxSteps": 0}', ": 'maxSteps' must be at least 1"),
    ("name-number", '{"name": 42}', ": 'name' must be a string"),
    (
        "trusted-string",
        '{"trustedTools": "execute_code"}',
        ": 'trustedTools' must be a list of tool names",
    ),
    ("servers-list", '{"mcpServers": []}', ": 'mcpServers' must be an object of name -> server"),
    (
        "server-empty",
        '{"mcpServers": {"t": {}}}',
        ": mcpServers.t: needs 'command' (stdio) or 'url' (streamable HTTP)",
    ),
    (
        "server-both",
        '{"mcpServers": {"t": {"command": "x", "url": "http://h"}}}',
        ": mcpServers.t: give 'command' or 'url', not both",
    ),
    (
        "server-args-string",
        '{"mcpServers": {"t": {"command": "x", "args": "a b"}}}',
        ": mcpServers.t.args must be a list of strings",
    ),
    (
        "server-env-nested",
        '{"mcpServers": {"t": {"command": "x", "env": {"A": {"b": 1}}}}}',
        ": mcpServers.t.env must be an object of string values",
    ),
    (
        "server-disabled-yes",
        '{"mcpServers": {"t": {"command": "x", "disabled": "yes"}}}',
        ": mcpServers.t.disabled must be true or false",
    ),
    (
        "server-timeout-zero",
        '{"mcpServers": {"t": {"command": "x", "timeout": 0}}}',
        ": mcpServers.t: 'timeout' must be at least 0.01",
    ),
    (
        "hook-event",
        '{"hooks": {"beforeLunch": ["true"]}}',
        ": hooks.beforeLunch is not a hook event (events: agentSpawn, userPromptSubmit, stop, "
        "preTurn, postTurn, preTool, postTool, preCompact, postCompact, turnError)",
    ),
    (
        "hook-number",
        '{"hooks": {"stop": [3]}}',
        ': hooks.stop must be a shell command, an array of them, or "" for none '
        '(an entry may also be {"command": "..."})',
    ),
]


@pytest.mark.parametrize(("name", "text", "expected"), AGENT_FILES, ids=[c[0] for c in AGENT_FILES])
def test_bad_agent_files_are_one_line_errors_and_the_agent_stays(kernel, name, text, expected):
    path = kernel.base / f"{name}.json"
    path.write_text(text)
    whole = name != "trailing-comma"
    assert_usage_error(kernel, f"%ollie agent {path}", f"%ollie: {path}{expected}", whole=whole)
    shown = kernel.run("%ollie agent").text().splitlines()
    assert shown[:2] == ["agent", "agent         default"], shown  # the agent stays


NO_AGENT = "no agent named 'nosuchagent' (agents: default; or give a path to a JSON file)"


def test_unreadable_agent_files(kernel):
    binary = kernel.base / "latin1.json"
    binary.write_bytes(b'{"prompt": "caf\xe9"}')
    assert_usage_error(
        kernel,
        f"%ollie agent {binary}",
        f"%ollie: {binary}: cannot read: 'utf-8' codec can't decode byte 0xe9 in position 15: "
        "invalid continuation byte",
    )
    folder = kernel.base / "folder.json"
    folder.mkdir()
    assert_usage_error(
        kernel,
        f"%ollie agent {folder}",
        f"%ollie: {folder}: cannot read: [Errno 21] Is a directory: '{folder}'",
    )
    missing = kernel.base / "missing.json"
    assert_usage_error(
        kernel, f"%ollie agent {missing}", f"%ollie: {missing}: no such agent config file"
    )
    assert_usage_error(kernel, "%ollie agent nosuchagent", f"%ollie: {NO_AGENT}")


def test_agent_file_problems_that_only_warn(kernel):
    path = kernel.base / "warns.json"
    path.write_text(
        json.dumps(
            {
                "colour": "blue",
                "mcpServers": {
                    "ghost": {"command": str(kernel.base / "no-such-server"), "retries": 3},
                    "envy": {
                        "command": str(kernel.base / "also-missing"),
                        "args": ["--db", "$OLLIE_REL_NOT_SET/tasks.db"],
                    },
                },
            }
        )
    )
    run = kernel.run(f"%ollie agent {path}")
    assert run.error is None and "Traceback" not in run.stderr()
    text = run.text()
    assert "unknown key 'colour' ignored" in text
    assert "mcpServers.ghost: unknown key 'retries' ignored" in text
    assert "command not found" in text
    # an unset variable in a path is refused, not expanded to "/tasks.db"
    assert (
        "envy: $OLLIE_REL_NOT_SET is not set (used in its command, args, cwd or url); set it, "
        "or give a default as ${OLLIE_REL_NOT_SET:-VALUE}"
    ) in text
    assert "failed to connect" in text  # the plan backend line says why plans stay in context
    assert "agent: warns" in text
    plan = kernel.run("%%ollie\nGoal\n- a\n- b")
    # only 'envy' looks like a task server (its args name tasks.db); 'ghost' is named once above
    assert "no plan backend: MCP server 'envy' failed to connect" in plan.text()
    assert "ghost" not in plan.text()
    assert "no MCP server exposes task_create" in kernel.run("%ollie agent default").text()


MAGIC_LINES = [
    ("%ollie frobnicate", "%ollie: unknown command 'frobnicate'; see %ollie help"),
    ("%ollie 'unclosed", "%ollie: unknown command ''unclosed'; see %ollie help"),
    ("%ollie plan 999", "%ollie plan: no plan '999'; ask for something with several steps"),
    ("%ollie plan --bogus", "%ollie plan: unrecognized arguments: --bogus"),
    (
        "%ollie plan --watch soon",
        "%ollie plan: argument --watch: 'soon' is not a number of seconds",
    ),
    ("%ollie plan 1 2", "%ollie plan: no plan '1 2'; ask for something with several steps"),
    ("%ollie model a b", "%ollie model: too many words 'a b'; usage: %ollie model NAME"),
    (
        "%ollie fallback queue extra",
        "%ollie fallback: too many words 'queue extra'; usage: %ollie fallback [VAR | queue | off]",
    ),
    ("%ollie resume nope", "%ollie resume: no saved session 'nope' in {base}/data/sessions"),
    ("%ollie resume", "%ollie resume: give a session id or name (see %ollie sessions)"),
    ("%ollie cwd /nonexistent/dir", "%ollie cwd: /nonexistent/dir is not a directory"),
    (
        "%ollie backend nosuch",
        "%ollie backend: unknown chat backend 'nosuch'; "
        "choose one of: offline, openai, openrouter, anthropic, ollama",
    ),
    (
        "%ollie backend openai",
        "%ollie backend: the openai backend needs OLLIE_OPENAI_KEY or OPENAI_API_KEY "
        "(or OLLIE_OPENAI_URL for a local server)",
    ),
    ("%ollie model", "%ollie model: give a model name (see %ollie models)"),
    ("%ollie tasks", "%ollie tasks: no task server is wired (see %ollie mcp)"),
    ("%ollie history abc", "%ollie history: give a number of messages, not 'abc'"),
    ("%ollie history -3", "%ollie history: give a number of messages, not '-3'"),
    (
        "%ollie queue bogus",
        "%ollie queue: use '%ollie queue', '%ollie queue clear' or '%ollie queue pop'",
    ),
    ("%ollie fallback 3x", "%ollie fallback: no variable named '3x' in the notebook"),
    ("%ollie rename", "%ollie rename: give a name"),
    ("%ollie ask", "%ollie ask: the prompt is empty"),
    ("%ollie ask --agent", "%ollie ask: --agent needs a value"),
    ("%ollie ask --model", "%ollie ask: --model needs a value"),
    (
        "%ollie ask --bogus hi",
        "%ollie ask: unknown option '--bogus' (options: [--bg] [--inject] [--agent NAME] "
        "[--model M] [-i]); put -- before a prompt that starts with '-'",
    ),
    ("%%ollie stray words\nhello", "%%ollie: unexpected words on the magic line: stray words"),
    ("%%ollie --agent nosuchagent\nhello", f"%ollie: {NO_AGENT}"),
]


@pytest.mark.parametrize(("line", "expected"), MAGIC_LINES, ids=[c[0] for c in MAGIC_LINES])
def test_bad_magic_lines_are_one_line_usage_errors(kernel, line, expected):
    assert_usage_error(kernel, line, expected.replace("{base}", str(kernel.base)))


def test_a_variable_that_is_no_backend_is_named(kernel):
    kernel.run("x = 5")
    assert_usage_error(
        kernel,
        "%ollie backend x",
        "%ollie backend: x is not a chat backend (it is of type int; a backend has chat_stream); "
        "or give one of: offline, openai, openrouter, anthropic, ollama",
    )


def test_cwd_to_a_file_and_fallback_to_a_class(kernel):
    (kernel.base / "plain.txt").write_text("x")
    plain = kernel.base / "plain.txt"
    assert_usage_error(kernel, f"%ollie cwd {plain}", f"%ollie cwd: {plain} is not a directory")
    code = textwrap.dedent(
        """
        class Sheet:
            def create_plan(self, goal, steps):
                return [str(i) for i in range(len(steps))]
        """
    )
    assert kernel.run(code).error is None
    assert_usage_error(
        kernel,
        "%ollie fallback Sheet",
        "%ollie fallback: Sheet is a class: give an instance, Sheet()",
    )
    assert "fallback: none" in kernel.run("%ollie fallback").text()


def test_the_kernel_still_plans_after_all_that(kernel):
    run = kernel.run("%%ollie\nShip it\n- build\n- test\n- release (after 2)")
    assert run.error is None
    assert "Plan: Ship it" in run.text()
    history = kernel.run("%ollie history 2")
    assert "history (" in history.text() and history.error is None
