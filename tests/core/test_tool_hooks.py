"""preTool / postTool / turnError hooks, as ollie has them: real commands fed the event as
JSON on stdin, around real tool calls (a notebook tool server) and a failing model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ollie_nb.core import AgentConfig, AgentCore, Notice, ToolFinished
from ollie_nb.core._hooks import run_hooks
from ollie_nb.llm import LLMHTTPError, OfflineBackend, OpenAIBackend, RetryPolicy, ToolCall
from ollie_nb.tools import NotebookToolServer
from tests.conftest import MakeCore
from tests.support.llm_fake_provider import FAKE_KEY, Reply, json_reply, sse
from tests.support.processes import cancel_mid_start, wait_group_gone

HOOK = """\
import json, pathlib, sys
event = json.load(sys.stdin)
with open({log!r}, "a") as log:
    log.write(json.dumps(event) + "\\n")
{body}
"""


def hook(tmp_path: Path, name: str, body: str) -> str:
    """A hook command: a Python script that logs its payload to `<name>.jsonl`, then `body`."""
    script = tmp_path / f"{name}.py"
    script.write_text(HOOK.format(log=str(tmp_path / f"{name}.jsonl"), body=body))
    return f"{sys.executable} {script}"


def payloads(tmp_path: Path, name: str) -> list[dict]:
    path = tmp_path / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def shouting_core(
    make_core: MakeCore, hooks: dict, turns: list[Any]
) -> tuple[AgentCore, list[str]]:
    ran: list[str] = []
    tools = NotebookToolServer()

    async def shout(text: str) -> str:
        """Say it louder."""
        ran.append(text)
        return text.upper()

    tools.add(shout)
    core = await make_core(
        OfflineBackend(turns=turns),
        agent=AgentConfig.from_dict({"hooks": hooks}),
        extra_servers=lambda config: {"notebook": tools},
    )
    return core, ran


def call(text: str, call_id: str) -> ToolCall:
    return ToolCall(call_id, "shout", json.dumps({"text": text}))


async def submit(core: AgentCore) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    return await core.submit("go", events.append), events


def results(core: AgentCore) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in core.session.history if m.role == "tool"}


@pytest.mark.anyio
async def test_pre_tool_hook_sees_the_call_and_can_deny_it(make_core, tmp_path):
    deny = """
args = json.loads(event["args"])
if "secret" in args["text"]:
    print("no shouting of secrets", file=sys.stderr)
    sys.exit(2)
"""
    hooks = {"preTool": hook(tmp_path, "pre", deny)}
    turns = [[call("hello", "c1"), call("the secret plan", "c2")], "ok"]
    core, ran = await shouting_core(make_core, hooks, turns)
    result, _ = await submit(core)
    assert result.reply == "ok"
    assert ran == ["hello"]  # the denied call never ran
    got = results(core)
    assert got["c1"] == "HELLO"
    assert got["c2"] == "error: a preTool hook denied shout: no shouting of secrets"
    first, second = payloads(tmp_path, "pre")
    assert first["hook_event_name"] == "preTool" and first["tool"] == "shout"
    assert json.loads(first["args"]) == {"text": "hello"}
    assert first["session_id"] == core.session.session_id and first["cwd"] == str(tmp_path)
    assert json.loads(second["args"]) == {"text": "the secret plan"}


@pytest.mark.anyio
async def test_post_tool_hook_appends_to_or_replaces_the_result(make_core, tmp_path):
    post = """
if event["result"] == "LOUD":
    print("too loud, withheld", file=sys.stderr)
    sys.exit(2)
print("checked " + event["tool"])
"""
    hooks = {"postTool": hook(tmp_path, "post", post)}
    core, _ = await shouting_core(make_core, hooks, [[call("hi", "c1"), call("loud", "c2")], "ok"])
    _, events = await submit(core)
    got = results(core)
    assert got == {"c1": "HI\nchecked shout", "c2": "too loud, withheld"}
    shown = {e.id: e.result for e in events if isinstance(e, ToolFinished)}
    assert shown == got  # the user sees what the model reads
    logged = sorted(
        (p["tool"], json.loads(p["args"])["text"], p["result"]) for p in payloads(tmp_path, "post")
    )
    assert logged == [("shout", "hi", "HI"), ("shout", "loud", "LOUD")]


HOOK_KEY = "sk-ant-" + "h0ok" * 8  # a key format no environment variable holds


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_post_tool_hooks_output_holding_a_key_is_redacted(make_core, tmp_path):
    """Issue 37: a postTool hook's text (appended or replacing) reached the model and the
    cell with a key in it; hook output goes through the one redaction call."""
    post = f"""
if event["result"] == "LOUD":
    print("withheld: key {HOOK_KEY}", file=sys.stderr)
    sys.exit(2)
print("checked with {HOOK_KEY}")
"""
    hooks = {"postTool": hook(tmp_path, "post", post)}
    core, _ = await shouting_core(make_core, hooks, [[call("hi", "c1"), call("loud", "c2")], "ok"])
    _, events = await submit(core)
    got = results(core)
    assert got == {"c1": "HI\nchecked with ***", "c2": "withheld: key ***"}
    shown = {e.id: e.result for e in events if isinstance(e, ToolFinished)}
    assert shown == got


def rate_limited(messages: list[Any], tools: list[Any]) -> Any:
    raise LLMHTTPError("rate limited: try again in 30 s", status=429)


async def failing_core(make_core: MakeCore, tmp_path: Path, body: str) -> AgentCore:
    hooks = {"turnError": hook(tmp_path, "err", body)}
    agent = AgentConfig.from_dict({"hooks": hooks})
    return await make_core(OfflineBackend(rate_limited), agent=agent)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_post_turn_hooks_output_reaches_the_next_prompt_only(make_core, tmp_path):
    counting = (
        "count = len(pathlib.Path({log!r}).read_text().splitlines())\n"
        "print(f'after turn {{count}}')"
    ).format(log=str(tmp_path / "postTurn.jsonl"))
    prompts: list[str] = []

    def reply(messages, tools):
        prompts.append(messages[-1].content)
        return "ok"

    agent = AgentConfig.from_dict({"hooks": {"postTurn": hook(tmp_path, "postTurn", counting)}})
    core = await make_core(OfflineBackend(reply), agent=agent)
    for prompt in ("one", "two", "three"):
        await core.submit(prompt)
    assert prompts == ["one", "two\n\nafter turn 1", "three\n\nafter turn 2"]


@pytest.mark.anyio
async def test_turn_error_hook_that_exits_0_handles_the_error(make_core, tmp_path):
    core = await failing_core(make_core, tmp_path, 'print("switched to the backup model")')
    result, events = await submit(core)
    assert result.error and result.error_handled
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert "a turnError hook handled the error: switched to the backup model" in notes
    (payload,) = payloads(tmp_path, "err")
    assert payload["error_type"] == "rate_limit" and "rate limited" in payload["error"]


@pytest.mark.anyio
async def test_turn_error_hook_that_fails_leaves_the_error_unhandled(make_core, tmp_path):
    core = await failing_core(make_core, tmp_path, "sys.exit(1)")
    result, events = await submit(core)
    assert result.error and not result.error_handled
    assert not any("handled" in e.text for e in events if isinstance(e, Notice))


@pytest.mark.anyio
async def test_hook_commands_get_the_payload_as_ollie_variables(make_core, tmp_path):
    env_hook = hook(
        tmp_path,
        "env",
        "import os\n"
        "names = ('OLLIE_HOOK_EVENT_NAME', 'OLLIE_TOOL', 'OLLIE_SESSION_ID', 'OLLIE_RESULT')\n"
        "print(json.dumps({n: os.environ.get(n) for n in names}))",
    )
    core, _ = await shouting_core(
        make_core, {"postTool": [env_hook]}, [[call("x" * 40_000, "c1")], "done"]
    )
    await submit(core)
    (result,) = [m.content for m in core.session.history if m.role == "tool"]
    seen = json.loads(result.splitlines()[-1])
    assert seen["OLLIE_HOOK_EVENT_NAME"] == "postTool"
    assert seen["OLLIE_TOOL"] == "shout"
    assert seen["OLLIE_SESSION_ID"] == core.session.session_id
    assert seen["OLLIE_RESULT"] == "X" * 16 * 1024  # cut; stdin has the whole result
    (payload,) = payloads(tmp_path, "env")
    assert payload["result"] == "X" * 40_000


async def limited_core(make_core: MakeCore, tmp_path: Path, provider: Any, body: str) -> AgentCore:
    """A real OpenAI-wire backend that is rate limited four times, then answers."""
    limited = json_reply(429, {"error": {"message": "Rate limit reached"}})
    provider.queue(*[limited] * 4, Reply(chunks=[sse({"choices": [{"delta": {}}]})]))
    model = OpenAIBackend(
        "gpt-4o-mini",
        base_url=provider.url + "/v1",
        api_key=FAKE_KEY,
        retry=RetryPolicy(base_delay=0.01, max_delay=0.02),
    )
    agent = AgentConfig.from_dict({"hooks": {"turnError": hook(tmp_path, "err", body)}})
    return await make_core(model, agent=agent)


@pytest.mark.anyio
async def test_a_turn_error_hook_that_handles_the_first_error_skips_the_retries(
    make_core, tmp_path, provider
):
    core = await limited_core(make_core, tmp_path, provider, 'print("switched model")')
    result, _ = await submit(core)
    assert result.error_handled and "Rate limit reached" in result.error
    assert len(provider.requests) == 1  # ollie: a handled first error is not retried
    (payload,) = payloads(tmp_path, "err")
    assert payload["error_type"] == "rate_limit"


@pytest.mark.anyio
async def test_a_turn_error_hook_that_does_not_handle_it_is_asked_once_and_retries_go_on(
    make_core, tmp_path, provider
):
    core = await limited_core(make_core, tmp_path, provider, "sys.exit(1)")
    result, _ = await submit(core)
    assert result.error and not result.error_handled
    assert len(provider.requests) == 4  # the request and its three retries
    assert len(payloads(tmp_path, "err")) == 1


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_hook_cancelled_while_it_starts_takes_its_whole_group(tmp_path):
    """Ctrl-C before a hook's pipes connected: the command its shell forked dies too."""
    pid_file = tmp_path / "pid"
    command = f"sleep 30 & echo $$ > {pid_file}; wait"
    call = run_hooks("preToolUse", [command], {}, str(tmp_path))
    pgid = await cancel_mid_start(call, "sh", pid_file)
    assert not wait_group_gone(pgid), f"the hook's process group {pgid} outlived the cancel"
