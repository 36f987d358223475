"""A scripted chat model that obeys text injected into a step (OpenAI wire format).

For the fake provider (`FakeProvider.respond`): to a step prompt it answers with every
`call TOOL with {JSON}` the prompt holds, plus `task_update` marking its own step done;
to tool results it answers with a short text. A model that does what a shared store's
text tells it is the worst case the tool gateway must hold against.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.llm.test_openai import DONE, TEXT_REPLY, USAGE_CHUNK, call_delta, chunk
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Recorded, Reply

ORDER = re.compile(r"call (task_\w+) with (\{.*\})")
OWN_STEP = re.compile(r"\[task (\S+)\]")


def calls_reply(calls: list[tuple[str, dict[str, Any]]]) -> Reply:
    """One response making `calls` (tool name, arguments) at once."""
    chunks = [chunk({"role": "assistant", "content": None})]
    for n, (name, args) in enumerate(calls):
        chunks.append(call_delta(n, json.dumps(args), f"call_{n}", name))
    return Reply(chunks=[*chunks, chunk({}, "tool_calls"), USAGE_CHUNK, DONE])


def obey(request: Recorded) -> Reply:
    """What the obedient model answers to one chat request."""
    last = request.body["messages"][-1]
    if last["role"] != "user":
        return Reply(chunks=TEXT_REPLY)
    text = str(last["content"])
    calls = [(name, json.loads(args)) for name, args in ORDER.findall(text)]
    own = OWN_STEP.search(text)
    if own is not None:
        calls.append(("task_update", {"id": own.group(1), "status": "done"}))
    return calls_reply(calls) if calls else Reply(chunks=TEXT_REPLY)


def model_env(provider: FakeProvider) -> dict[str, str]:
    """A worker's environment variables for the OpenAI backend on `provider`."""
    return {
        "OLLIE_BACKEND": "openai",
        "OLLIE_OPENAI_URL": provider.url + "/v1",
        "OLLIE_OPENAI_KEY": FAKE_KEY,
        "OLLIE_MODEL": "gpt-4o-mini",
    }
