"""OfflineBackend: a deterministic chat model without network, scripted or a small demo planner."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from ollie_nb.llm._types import (
    Done,
    GenerationParams,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ThinkingReady,
    ToolCall,
    ToolCallsReady,
    ToolDef,
    Usage,
    UsageReport,
)
from ollie_nb.planning import (
    TASK_UPDATE,
    Review,
    ReviewNote,
    read_held,
    read_queued,
    read_review,
    read_step,
)

OFFLINE_MODEL = "offline-planner"
PLAN_TOOL = "reasoning_plan"
TASK_UPDATE_TOOL = TASK_UPDATE

Turn = str | Message | Sequence[ToolCall | Mapping[str, Any]]
"""One scripted reply: text, a list of tool calls (ToolCall or {"name", "arguments"}), or an
assistant Message carrying both."""

TurnFunction = Callable[[list[Message], list[ToolDef]], Turn | Awaitable[Turn]]
"""Computes the reply to a conversation from its messages and the tools on offer."""

# A step prompt names its task as "[task t-1a2b]" or "(id: t-1a2b)".
_TASK_ID = re.compile(r"\[task\s+([A-Za-z0-9][\w.:-]*)\]|\(id:\s*([A-Za-z0-9][\w.:-]*)\)")
_STEP_LINE = re.compile(r"^\s*Step\s+\d+", re.MULTILINE)
# "Step 2:", "Step 2/5.", "Step 2 of 5 [q2]:" ... up to the title.
_STEP_PREFIX = re.compile(
    r"^\s*Step\s+\d+(?:\s*(?:/|of)\s*\d+)?\s*(?:\[[^\]]*\])?\s*[:.)-]?\s*", re.IGNORECASE
)
_ANNOTATION = re.compile(r"\[task\s+[^\]]*\]|\(id:[^)]*\)|\(after:?[^)]*\)", re.IGNORECASE)

_ITEM = re.compile(r"^(\s*)(?:[-*•]|\d+[.)])\s+(.*?)\s*$")
_AFTER = re.compile(r"\(\s*(?:after|depends\s+on)\b:?([^)]*)\)", re.IGNORECASE)
_INDEPENDENT = re.compile(r"\(\s*(?:independent|no\s+deps?)\s*\)", re.IGNORECASE)
_GOAL_PREFIX = re.compile(r"^(?:#+\s*)?(?:(?:goal|plan)\s*:\s*)?", re.IGNORECASE)

HELP_TEXT = (
    "I am the offline model: no LLM is configured, so I can only show how planning works. "
    "Send a goal on the first line and its steps as a bulleted or numbered list, e.g.\n\n"
    "Bake bread\n- buy flour\n- knead the dough\n- bake it (after 2)\n\n"
    "and I will call reasoning_plan with it. To talk to a real model, set OLLIE_BACKEND "
    "(openai, openrouter, anthropic or ollama) and its API key."
)


def step_prompt_task_id(text: str) -> str | None:
    """The task id of a task-server step prompt (planning's `read_step`), or a typed `(id: ID)`."""
    step = read_step(text)
    if step is not None:
        return step.step_id if step.kind == "tasks" else None
    match = _TASK_ID.search(text)
    return (match.group(1) or match.group(2)) if match else None


def is_step_prompt(text: str) -> bool:
    """Whether a user message is a queued plan step.

    It is when it starts with "Step ", has a line starting "Step <n>" (a goal may be
    prepended to the first step), or names a task id as `[task ID]` or `(id: ID)`.
    """
    return (
        text.lstrip().startswith("Step ")
        or _STEP_LINE.search(text) is not None
        or step_prompt_task_id(text) is not None
    )


def step_title(text: str) -> str:
    """The title of a step prompt: its "Step n:" line without numbering and annotations."""
    lines = [line for line in text.splitlines() if line.strip()]
    chosen = next((line for line in lines if _STEP_LINE.match(line)), lines[0] if lines else "")
    title = _ANNOTATION.sub("", _STEP_PREFIX.sub("", chosen, count=1))
    return " ".join(title.split()).rstrip(".") or "this step"


def parse_plan_prompt(text: str) -> tuple[str, list[dict[str, Any]]] | None:
    """A goal line followed by a bulleted or numbered list, as reasoning_plan arguments.

    Each step comes after the previous one unless it says "(after 1, 3)" (1-based) or
    "(independent)" / "(after none)"; indented lines under an item become its body.
    Returns None when the text has no goal line before a list.
    """
    parsed = _parse_plan(text)
    return None if parsed is None else (parsed[0], parsed[1])


def plan_prompt_notes(text: str) -> list[str]:
    """What the list of a plan prompt said that its plan leaves out, and why (one line each)."""
    parsed = _parse_plan(text)
    return [] if parsed is None else parsed[2]


def _parse_plan(text: str) -> tuple[str, list[dict[str, Any]], list[str]] | None:
    """The goal, the steps and the notes on what was dropped (see parse_plan_prompt)."""
    goal = ""
    items: list[tuple[str, list[str]]] = []
    base_indent: int | None = None
    for raw in text.splitlines():
        if not raw.strip():
            continue
        match = _ITEM.match(raw)
        indent = len(raw) - len(raw.lstrip())
        if match and (base_indent is None or indent <= base_indent):
            if not goal:
                return None
            base_indent = indent if base_indent is None else base_indent
            items.append((match.group(2), []))
        elif items and indent > (base_indent or 0):
            items[-1][1].append(raw.strip())
        elif items:
            break  # prose after the list
        elif not goal:
            goal = _GOAL_PREFIX.sub("", raw.strip()).rstrip(":").strip() or raw.strip()
    if not goal or not items:
        return None
    steps: list[dict[str, Any]] = []
    notes: list[str] = []
    for i, (item, body) in enumerate(items):
        after = [i - 1] if i else []
        if _INDEPENDENT.search(item):
            after = []
        elif annotation := _AFTER.search(item):
            after = _after_of(annotation.group(1), i, len(items), notes)
        title = " ".join(_INDEPENDENT.sub("", _AFTER.sub("", item)).split())
        if not title:
            title = f"Step {i + 1}"
            notes.append(f"item {i + 1} has no title: it is called {title!r}")
        steps.append({"title": title, "body": "\n".join(body), "after": after})
    return goal, steps, notes


def _after_of(words: str, i: int, count: int, notes: list[str]) -> list[int]:
    """The 0-based steps item `i` waits for, from its "(after ...)" words; what cannot be a
    dependency goes into `notes` with the reason."""
    if "none" in words.lower():
        return []
    after: list[int] = []
    where = f"item {i + 1}'s (after{' ' + words.strip() if words.strip() else ''})"
    for word in re.findall(r"[^\s,;]+", re.sub(r"\b(?:and|steps?)\b", " ", words, flags=re.I)):
        if not word.isdigit():
            notes.append(f"{where}: {word!r} is not a step number; it was left out")
        elif not 1 <= int(word) <= count:
            notes.append(f"{where}: there is no step {word} (the list has {count}); left out")
        elif int(word) - 1 >= i:
            notes.append(
                f"{where}: step {word} is not before it (waiting for it could make a cycle); "
                "left out"
            )
        elif int(word) - 1 not in after:
            after.append(int(word) - 1)
    return after


def _words(text: str) -> int:
    return len(text.split())


class OfflineBackend:
    """A deterministic chat model with no network: scripted turns, a function, or a demo planner.

    - `OfflineBackend(turns=[...])` replies with each turn in order, one per request;
    - `OfflineBackend(fn)` replies with `fn(messages, tools)` (sync or async);
    - `OfflineBackend()` is a demo planner: a goal line plus a list becomes a
      `reasoning_plan` call, a step prompt (see `is_step_prompt`) is acknowledged (after
      marking its task done with `task_update` when it names one), and anything else gets
      a short explanation of how to get a plan.

    Text streams word by word (`chunk_delay` seconds apart), then usage (words counted as
    tokens) and done. A scripted Message's thinking blocks come first, as reasoning, and
    whole at the end (as Anthropic's do), so a script can stand in for a thinking model.
    """

    name = "offline"
    notice: str = ""
    """How this backend was chosen, one line (set by backend_from_env); empty otherwise."""

    def secrets(self) -> tuple[str, ...]:
        """The offline model holds no key."""
        return ()

    def __init__(
        self,
        fn: TurnFunction | None = None,
        *,
        turns: Sequence[Turn] | None = None,
        model: str = OFFLINE_MODEL,
        chunk_delay: float = 0.0,
        context_length: int | None = None,
    ) -> None:
        if fn is not None and not callable(fn):
            raise TypeError(
                "OfflineBackend(fn): fn must be callable; pass scripted replies as turns=[...]"
            )
        if fn is not None and turns is not None:
            raise TypeError("OfflineBackend takes a function or turns=[...], not both")
        self._fn = fn
        self._turns = list(turns) if turns is not None else None
        self._next_turn = 0
        self._model = model
        self.chunk_delay = chunk_delay
        self.window = context_length  # a context window to report (tests of compaction)

    @property
    def model(self) -> str:
        """The model name (any name works; the behaviour does not depend on it)."""
        return self._model

    def set_model(self, name: str) -> None:
        """Rename the model."""
        self._model = name

    async def context_length(self) -> int | None:
        """The window given at construction; None (no real window) by default."""
        return self.window

    async def models(self) -> list[str]:
        """The one offline model."""
        return [self._model]

    def __repr__(self) -> str:
        mode = "function" if self._fn else "script" if self._turns is not None else "demo"
        return f"OfflineBackend(model={self._model!r}, mode={mode!r})"

    async def chat_stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDef] = (),
        params: GenerationParams | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream the deterministic reply to `messages` (see the class docstring)."""
        messages, tools = list(messages), list(tools)
        reply = _as_message(await self._reply(messages, tools), messages)
        for block in reply.thinking:
            if block.thinking:
                yield ReasoningDelta(block.thinking)
        for piece in re.findall(r"\S*\s*", reply.content):
            if piece:
                await asyncio.sleep(self.chunk_delay)  # also a cancellation point
                yield TextDelta(piece)
        if reply.tool_calls:
            yield ToolCallsReady(reply.tool_calls)
        if reply.thinking:
            yield ThinkingReady(reply.thinking)
        prompt_words = sum(
            _words(m.content) + sum(_words(c.arguments) for c in m.tool_calls) for m in messages
        )
        reply_words = _words(reply.content) + sum(_words(c.arguments) for c in reply.tool_calls)
        yield UsageReport(Usage(prompt_words, reply_words))
        yield Done("tool_calls" if reply.tool_calls else "stop")

    async def _reply(self, messages: list[Message], tools: list[ToolDef]) -> Turn:
        if self._fn is not None:
            turn = self._fn(messages, tools)
            return await turn if inspect.isawaitable(turn) else turn
        if self._turns is not None:
            if self._next_turn >= len(self._turns):
                return (
                    f"The offline script has no more replies (it had {len(self._turns)}); "
                    "this request got none."
                )
            self._next_turn += 1
            return self._turns[self._next_turn - 1]
        return demo_reply(messages, tools)


def demo_reply(messages: list[Message], tools: list[ToolDef]) -> Turn:
    """The demo planner's reply to a conversation (see OfflineBackend)."""
    tool_names = {t.name for t in tools}
    if messages and messages[-1].role == "tool":
        return _after_tool(messages)
    prompt = next((m.content for m in reversed(messages) if m.role == "user"), "")
    review = read_review(prompt)
    if review is not None:
        return _review_answer(review, messages, tool_names)
    if is_step_prompt(prompt):
        task_id = step_prompt_task_id(prompt)
        if task_id and TASK_UPDATE_TOOL in tool_names:
            return [{"name": TASK_UPDATE_TOOL, "arguments": {"id": task_id, "status": "done"}}]
        return _step_answer(prompt)
    plan = parse_plan_prompt(prompt)
    if plan is None:
        return HELP_TEXT
    goal, steps = plan
    if PLAN_TOOL in tool_names:
        return [{"name": PLAN_TOOL, "arguments": {"goal": goal, "steps": steps}}]
    lines = [f"Plan for: {goal} (no {PLAN_TOOL} tool is available to record it)"]
    for i, step in enumerate(steps):
        after = ", ".join(str(j + 1) for j in step["after"])
        lines.append(f"{i + 1}. {step['title']}" + (f" (after {after})" if after else ""))
    return "\n".join(lines)


def _review_answer(review: ReviewNote, messages: list[Message], tool_names: set[str]) -> Turn:
    """The demo planner told of the user's review: a plan sent back is planned again, its
    last step followed by one that does what the user asked; an approval is acknowledged."""
    if review.review is Review.APPROVED:
        return f"Plan {review.plan} was approved; its steps are worked as they come."
    if review.review is not Review.REJECTED:
        return f"Plan {review.plan} was discarded; I will not work it."
    last = _last_plan(messages)
    if last is None or PLAN_TOOL not in tool_names:
        return f"Plan {review.plan} was sent back ({review.reason}); I have no plan to revise."
    steps = [dict(s) for s in last["steps"]]
    title = " ".join(f"Revise: {review.reason}".split())[:120]
    steps.append({"title": title, "body": "", "after": [len(steps) - 1] if steps else []})
    return [{"name": PLAN_TOOL, "arguments": {"goal": last["goal"], "steps": steps}}]


def _last_plan(messages: list[Message]) -> dict[str, Any] | None:
    """The arguments of the conversation's latest reasoning_plan call (None when there is none)."""
    for message in reversed(messages):
        for call in reversed(message.tool_calls if message.role == "assistant" else []):
            if call.name != PLAN_TOOL:
                continue
            try:
                arguments = json.loads(call.arguments)
            except ValueError:
                continue
            if isinstance(arguments, dict) and isinstance(arguments.get("steps"), list):
                return arguments
    return None


def _step_answer(prompt: str) -> str:
    return (
        f"Completed step: {step_title(prompt)}. "
        "(The offline model does no real work; it only walks the plan.)"
    )


def _after_tool(messages: list[Message]) -> str:
    """The demo planner's text once the tool results of its last call are in."""
    call_msg = next((m for m in reversed(messages) if m.role == "assistant" and m.tool_calls), None)
    results: list[Message] = []
    for m in reversed(messages):
        if m.role != "tool":
            break
        results.insert(0, m)
    first = results[0] if results else None
    call = None
    if call_msg is not None:
        call = next(
            (c for c in call_msg.tool_calls if first and c.id == first.tool_call_id),
            call_msg.tool_calls[0],
        )
    result = first.content if first else ""
    result_lines = [line for line in result.splitlines() if line.strip()]
    if call is not None and call.name == PLAN_TOOL:
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            arguments = {}
        steps = arguments.get("steps") if isinstance(arguments, dict) else None
        goal = arguments.get("goal", "") if isinstance(arguments, dict) else ""
        count = len(steps) if isinstance(steps, list) else 0
        if first is not None and first.content.startswith("error:"):
            return f"The plan for {goal} was refused: {result_lines[0].removeprefix('error: ')}"
        head = f"Planned {count} step{'s' if count != 1 else ''} for: {goal}."
        prompt = next((m.content for m in reversed(messages) if m.role == "user"), "")
        dropped = "".join(f"\n- {note}" for note in plan_prompt_notes(prompt))
        if dropped:
            head += f"\n\nFrom your list:{dropped}"
        # the result's last line says where the plan went (saved, queued, in context only);
        # a warning is shown to the user as its own line already: not said twice
        if result_lines and result_lines[-1].startswith("warning:"):
            return f"{head}\n\nIt was not saved: it lives in context only (the warning says why)."
        return f"{head}\n\n{_where_it_went(result_lines[-1])}" if result_lines else head
    if call is not None and call.name == TASK_UPDATE_TOOL:
        prompt = next((m.content for m in reversed(messages) if m.role == "user"), "")
        answer = _step_answer(prompt)
        if result.lower().startswith("error"):
            answer += f" ({TASK_UPDATE_TOOL} said: {result_lines[0]})"
        return answer
    name = call.name if call is not None else "tool"
    return f"The {name} tool answered: {result_lines[0] if result_lines else '(nothing)'}"


def _where_it_went(status: str) -> str:
    """The plan's status line, told to the user: a held or queued plan's line is written for
    the model (stop here, wait), so it is said in the user's words."""
    held = read_held(status)
    if held is not None:
        return f"Plan {held} is waiting for your review: approve, edit or send it back below."
    queued = read_queued(status)
    if queued is not None:
        return f"Its {queued} steps are queued: each runs as a turn of its own, in order."
    return status


def _as_message(turn: Turn, messages: list[Message]) -> Message:
    """A turn as an assistant Message; tool calls get ids unique within the conversation."""
    if isinstance(turn, Message):
        if turn.role != "assistant":
            raise TypeError(
                f"an offline turn Message must be an assistant message, not {turn.role}"
            )
        return turn
    if isinstance(turn, str):
        return Message.assistant(turn)
    if not isinstance(turn, Sequence):
        raise TypeError(
            f"an offline turn is a str, a list of tool calls or a Message, not {turn!r}"
        )
    round_no = sum(1 for m in messages if m.role == "assistant")
    calls = []
    for i, item in enumerate(turn):
        if isinstance(item, ToolCall):
            calls.append(item)
        elif isinstance(item, Mapping) and "name" in item:
            arguments = item.get("arguments", {})
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            calls.append(
                ToolCall(str(item.get("id") or f"call_{round_no}_{i}"), item["name"], arguments)
            )
        else:
            raise TypeError(
                f"an offline tool call is a ToolCall or a dict with 'name', not {item!r}"
            )
    return Message.assistant("", calls)
