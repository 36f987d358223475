"""The ollie agent config (JSON): load, validate with file/line errors, expand `$VAR`s at connect."""

# long module: one concept, the agent file: its keys, their checks and the prompt commands.

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ollie_nb.core._budget import NO_BUDGETS, Budgets, Caps
from ollie_nb.errors import ConfigError

_T = TypeVar("_T")

HOOK_EVENTS = (
    "agentSpawn",
    "userPromptSubmit",
    "stop",
    "preTurn",
    "postTurn",
    "preTool",
    "postTool",
    "preCompact",
    "postCompact",
    "turnError",
)
DEFAULT_PLAN_REMINDER = 10
"""Tool rounds between reminders of the open plan (ollie's interval); `planReminder: 0` is off."""
DEFAULT_MAX_STEPS = 200
"""A turn's model calls: ollie has no cap; a high one stops a runaway loop from burning tokens
for hours, while real work (tens of tool calls) never meets it. The next prompt continues."""
FAILED_ROUNDS_NUDGE = 5
"""Tool rounds in a row in which every call failed before the model is nudged (ollie's)."""
FAILED_ROUNDS_LIMIT = 10
"""Tool rounds in a row in which every call failed that stop the turn (ollie's)."""
DEFAULT_CLAIM_LEASE = 60.0
"""Seconds a plan step's claim holds unless renewed: the claimer renews it every third of
that while the step's turn runs, so a dead claimer's step reopens within a minute."""
KNOWN_KEYS = {
    "name",
    "description",
    "prompt",
    "mcpServers",
    "hooks",
    "trustedTools",
    "sequentialTools",
    "planReminder",
    "maxTokens",
    "temperature",
    "frequencyPenalty",
    "presencePenalty",
    "topP",
    "topK",
    "minP",
    "reasoningEffort",
    "reasoning",
    "maxCompletionTokens",
    "promptCache",
    "tools",
    "maxSteps",
    "failedRoundsNudge",
    "failedRoundsLimit",
    "model",
    "backend",
    "planTimeout",
    "reviewPlans",
    "passEnv",
    "maxParallel",
    "claimLease",
    "taskServer",
    "python",
    "maxSessionCost",
    "maxSessionTokens",
    "maxPlanCost",
    "maxPlanTokens",
    "maxSubagentCost",
    "maxSubagentTokens",
}
SERVER_KEYS = {
    "command",
    "args",
    "env",
    "url",
    "headers",
    "disabled",
    "timeout",
    "connectTimeout",
    "cwd",
    "type",
    "transport",
}


PROMPT_COMMAND_TIMEOUT = 30.0  # seconds, as in ollie


@dataclass(frozen=True)
class McpServerConfig:
    """One entry of `mcpServers`: a stdio command or a streamable HTTP url."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    disabled: bool = False
    timeout: float = 60.0
    connect_timeout: float = 30.0


@dataclass(frozen=True)
class AgentConfig:
    """An ollie agent: system prompt additions, MCP servers, hooks, trust and generation knobs."""

    name: str = "default"
    path: str = ""
    prompt: str = ""
    mcp_servers: Mapping[str, McpServerConfig] = field(default_factory=dict)
    hooks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    trusted_tools: tuple[str, ...] | None = None
    sequential_tools: tuple[str, ...] = ()  # patterns (as trustedTools) of tools that run alone
    plan_reminder: int = DEFAULT_PLAN_REMINDER  # tool rounds between plan reminders; 0: never
    max_tokens: int | None = None
    temperature: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    reasoning_effort: str | None = None  # "low" / "medium" / "high" (OpenAI's reasoning_effort)
    thinking_budget: int | None = None  # `reasoning`: Anthropic's thinking budget, in tokens
    max_completion_tokens: int | None = None
    prompt_cache: bool = True  # `promptCache: false` marks no cache breakpoints
    tools: bool = True  # `tools: false` offers the model no tools
    prompt_commands: tuple[str, ...] = ()  # `prompt` as an array: commands whose output is it
    max_steps: int = DEFAULT_MAX_STEPS
    failed_rounds_nudge: int = (
        FAILED_ROUNDS_NUDGE  # all-failed tool rounds before a nudge; 0: never
    )
    failed_rounds_limit: int = (
        FAILED_ROUNDS_LIMIT  # all-failed tool rounds that stop a turn; 0: never
    )
    model: str = ""
    backend: str = ""
    plan_timeout: float = 120.0
    review_plans: bool = False  # `reviewPlans`: hold each plan for the user's review
    max_parallel: int = 4  # sub-agents running at once
    claim_lease: float = DEFAULT_CLAIM_LEASE  # s a step claim holds unrenewed; 0 = none
    task_server: str = ""  # `taskServer`: the mcpServers entry that holds plans ("": by tools)
    pass_env: tuple[str, ...] = ()  # variables execute_code and hooks see though secret-named
    python_exec: bool = False  # `"python": {"exec": true}`: offer python_exec in the notebook
    budgets: Budgets = NO_BUDGETS  # maxSessionCost, maxPlanTokens, ...: spend caps (BUDGETS.md)
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Any, source: str = "<config>", name: str = "") -> AgentConfig:
        """Validate a parsed agent JSON object; unknown keys become warnings, bad types errors."""
        where = source
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: the top level must be a JSON object")
        warnings = [
            f"{where}: unknown key {key!r} ignored" for key in data if key not in KNOWN_KEYS
        ]
        servers_raw = data.get("mcpServers")
        servers_raw = {} if servers_raw is None else servers_raw
        if not isinstance(servers_raw, Mapping):
            raise ConfigError(f"{where}: 'mcpServers' must be an object of name -> server")
        servers = {}
        for server_name, raw in servers_raw.items():
            servers[server_name] = _server(where, str(server_name), raw, warnings)
        declared = _opt(data, "name", str, where)  # checked even when the file names the agent
        return cls(
            name=name or declared or "default",
            path=source if source != "<config>" else "",
            prompt=_prompt_text(where, data.get("prompt")),
            prompt_commands=_prompt_commands(where, data.get("prompt")),
            mcp_servers=servers,
            hooks=_hooks(where, data.get("hooks")),
            trusted_tools=_trusted(where, data.get("trustedTools")),
            sequential_tools=_patterns(where, "sequentialTools", data.get("sequentialTools")),
            plan_reminder=_plan_reminder(data, where),
            max_tokens=_opt(data, "maxTokens", int, where, minimum=1),
            temperature=_opt(data, "temperature", float, where, minimum=0),
            frequency_penalty=_opt(data, "frequencyPenalty", float, where),
            presence_penalty=_opt(data, "presencePenalty", float, where),
            top_p=_opt(data, "topP", float, where, minimum=0),
            top_k=_opt(data, "topK", int, where, minimum=1),
            min_p=_opt(data, "minP", float, where, minimum=0),
            reasoning_effort=_opt(data, "reasoningEffort", str, where) or None,
            thinking_budget=_opt(data, "reasoning", int, where, minimum=1),
            max_completion_tokens=_opt(data, "maxCompletionTokens", int, where, minimum=1),
            prompt_cache=_flag(data, "promptCache", where, default=True),
            tools=_flag(data, "tools", where, default=True),
            max_steps=_opt(data, "maxSteps", int, where, minimum=1) or DEFAULT_MAX_STEPS,
            failed_rounds_nudge=_count(data, "failedRoundsNudge", where, FAILED_ROUNDS_NUDGE),
            failed_rounds_limit=_count(data, "failedRoundsLimit", where, FAILED_ROUNDS_LIMIT),
            model=_opt(data, "model", str, where) or "",
            backend=_opt(data, "backend", str, where) or "",
            plan_timeout=_opt(data, "planTimeout", float, where, minimum=0.1) or 120.0,
            review_plans=_flag(data, "reviewPlans", where, default=False),
            pass_env=_names(where, "passEnv", data.get("passEnv")),
            max_parallel=_opt(data, "maxParallel", int, where, minimum=1) or 4,
            claim_lease=_lease(data, where),
            task_server=_task_server(data, where, servers),
            python_exec=_python_exec(where, data.get("python"), warnings),
            budgets=_budgets(data, where),
            warnings=tuple(warnings),
        )

    def with_prompt_commands_run(self, cwd: str) -> AgentConfig:
        """This config with its prompt commands run (in `cwd`) and their output as its prompt.

        Run once when the agent is loaded, never per request: the system prompt stays the
        same bytes for the whole session (and the provider's prompt cache keeps serving it).
        """
        if not self.prompt_commands:
            return self
        where = self.path or self.name
        return replace(
            self, prompt=run_prompt_commands(self.prompt_commands, cwd, where), prompt_commands=()
        )


def run_prompt_commands(commands: Sequence[str], cwd: str, where: str = "<config>") -> str:
    """Each command's standard output (trailing newlines cut), joined by newlines, as ollie.

    A command that fails or outlives PROMPT_COMMAND_TIMEOUT is a ConfigError naming it.
    """
    parts: list[str] = []
    for command in commands:
        try:
            done = subprocess.run(
                ["sh", "-c", command],
                cwd=cwd or None,
                capture_output=True,
                text=True,
                timeout=PROMPT_COMMAND_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigError(f"{where}: prompt command {command!r} failed: {exc}") from None
        if done.returncode != 0:
            error = " ".join(done.stderr.split())[:200]
            raise ConfigError(
                f"{where}: prompt command {command!r} exited {done.returncode}: {error}"
            )
        output = done.stdout.rstrip("\n")
        if output:
            parts.append(output)
    return "\n".join(parts)


def load_agent_config(path: str | os.PathLike[str], name: str = "") -> AgentConfig:
    """Read and validate an agent JSON file; errors name the file, line and column."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such agent config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{file}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    return AgentConfig.from_dict(data, str(file), name=name or file.stem)


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand_vars(text: str, env: Mapping[str, str], missing: list[str] | None = None) -> str:
    """Expand `$VAR`, `${VAR}` and `${VAR:-default}` (the default when VAR is unset or empty).

    Like Go's os.ExpandEnv an unset name without a default becomes empty; it is noted
    in `missing`, so a caller can refuse it where an empty value would be dangerous.
    """

    def repl(match: re.Match[str]) -> str:
        key = match.group(1) or match.group(3)
        default = match.group(2)
        if default is not None:
            return env.get(key) or default
        if key not in env and missing is not None and key not in missing:
            missing.append(key)
        return env.get(key, "")

    return _VAR.sub(repl, text)


def _server(where: str, name: str, raw: Any, warnings: list[str]) -> McpServerConfig:
    at = f"{where}: mcpServers.{name}"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{at} must be an object with 'command' or 'url'")
    warnings.extend(f"{at}: unknown key {k!r} ignored" for k in raw if k not in SERVER_KEYS)
    command = raw.get("command", "")
    url = raw.get("url", "")
    if not isinstance(command, str) or not isinstance(url, str):
        raise ConfigError(f"{at}: 'command' and 'url' must be strings")
    if not command.strip() and not url.strip():
        raise ConfigError(f"{at}: needs 'command' (stdio) or 'url' (streamable HTTP)")
    if command.strip() and url.strip():
        raise ConfigError(f"{at}: give 'command' or 'url', not both")
    args = raw.get("args", []) or []
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise ConfigError(f"{at}.args must be a list of strings")
    env = _str_map(at, "env", raw.get("env"))
    headers = _str_map(at, "headers", raw.get("headers"))
    disabled = raw.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ConfigError(f"{at}.disabled must be true or false")
    cwd = raw.get("cwd", "") or ""
    if not isinstance(cwd, str):
        raise ConfigError(f"{at}.cwd must be a string")
    return McpServerConfig(
        name=name,
        command=command.strip(),
        args=tuple(str(a) for a in args),
        env=env,
        url=url.strip(),
        headers=headers,
        cwd=cwd,
        disabled=disabled,
        timeout=_opt(raw, "timeout", float, at, minimum=0.01) or 60.0,
        connect_timeout=_opt(raw, "connectTimeout", float, at, minimum=0.01) or 30.0,
    )


def _str_map(at: str, key: str, raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in raw.items()
    ):
        raise ConfigError(f"{at}.{key} must be an object of string values")
    return {k: str(v) for k, v in raw.items()}


def _hooks(where: str, raw: Any) -> dict[str, tuple[str, ...]]:
    """hooks: event -> a command string or an array of them; "" means no hook (as in ollie)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: 'hooks' must be an object of event -> commands")
    hooks: dict[str, tuple[str, ...]] = {}
    for event, value in raw.items():
        if event not in HOOK_EVENTS:
            raise ConfigError(
                f"{where}: hooks.{event} is not a hook event (events: {', '.join(HOOK_EVENTS)})"
            )
        commands = tuple(c for c in map(_hook_command(where, event), _items(value)) if c)
        if commands:
            hooks[event] = commands
    return hooks


def _names(where: str, key: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(n, str) and n for n in raw):
        raise ConfigError(f"{where}: '{key}' must be a list of environment variable names")
    return tuple(raw)


def _items(value: Any) -> list[Any]:
    return [] if value is None else value if isinstance(value, list) else [value]


def _hook_command(where: str, event: str) -> Any:
    def command(item: Any) -> str:
        if isinstance(item, Mapping):
            item = item.get("command", "")
        if not isinstance(item, str):
            raise ConfigError(
                f"{where}: hooks.{event} must be a shell command, an array of them, or "
                '"" for none (an entry may also be {"command": "..."})'
            )
        return item.strip()

    return command


def _python_exec(where: str, raw: Any, warnings: list[str]) -> bool:
    """The `python` section: `{"exec": true}` offers python_exec (it still asks unless trusted)."""
    if raw is None:
        return False
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: 'python' must be an object such as {{\"exec\": true}}")
    warnings.extend(f"{where}: python: unknown key {k!r} ignored" for k in raw if k != "exec")
    enabled = raw.get("exec", False)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{where}: python.exec must be true or false")
    return enabled


def _prompt_text(where: str, raw: Any) -> str:
    """`prompt` as a string is the prompt itself; as an array, it is commands (run later)."""
    if raw is None or isinstance(raw, list):
        return ""
    if not isinstance(raw, str):
        raise ConfigError(f"{where}: 'prompt' must be a string or an array of shell commands")
    return raw


def _prompt_commands(where: str, raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list):
        return ()
    if not all(isinstance(c, str) for c in raw):
        raise ConfigError(f"{where}: 'prompt' as an array must hold shell commands (strings)")
    return tuple(c.strip() for c in raw if c.strip())


def _flag(data: Mapping[str, Any], key: str, where: str, *, default: bool) -> bool:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: '{key}' must be true or false")
    return value


def _patterns(where: str, key: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        raise ConfigError(f"{where}: '{key}' must be a list of tool name patterns")
    return tuple(raw)


def _plan_reminder(data: Mapping[str, Any], where: str) -> int:
    return _count(data, "planReminder", where, DEFAULT_PLAN_REMINDER)


def _count(data: Mapping[str, Any], key: str, where: str, default: int) -> int:
    """A whole number of rounds, 0 for never; `default` when the key is absent."""
    value = _opt(data, key, int, where, minimum=0)
    return default if value is None else value


def _trusted(where: str, raw: Any) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        raise ConfigError(f"{where}: 'trustedTools' must be a list of tool names")
    return tuple(raw)


def _budgets(data: Mapping[str, Any], where: str) -> Budgets:
    """The spend caps: `max{Session,Plan,Subagent}{Cost,Tokens}`, dollars and tokens above 0."""

    def caps(scope: str) -> Caps:
        cost = _opt(data, f"max{scope}Cost", float, where, minimum=0)
        tokens = _opt(data, f"max{scope}Tokens", int, where, minimum=1)
        return Caps(cost or None, tokens)

    found = Budgets(caps("Session"), caps("Plan"), caps("Subagent"))
    return NO_BUDGETS if found == NO_BUDGETS else found


def _task_server(data: Mapping[str, Any], where: str, servers: Mapping[str, Any]) -> str:
    """`taskServer`: the name of one of the file's mcpServers (the one that holds plans)."""
    name = _opt(data, "taskServer", str, where) or ""
    if name and name not in servers:
        known = ", ".join(sorted(servers)) or "none"
        raise ConfigError(f"{where}: 'taskServer' is {name!r}, not one of mcpServers ({known})")
    return name


def _lease(data: Mapping[str, Any], where: str) -> float:
    """`claimLease`: seconds (0 for claims without a lease), at most a week."""
    value = _opt(data, "claimLease", float, where, minimum=0)
    if value is None:
        return DEFAULT_CLAIM_LEASE
    if value > 7 * 24 * 3600:
        raise ConfigError(f"{where}: 'claimLease' is {value:g} s; give at most a week (604800)")
    return float(value)


def _opt(
    data: Mapping[str, Any],
    key: str,
    kind: type[_T],
    where: str,
    minimum: float | None = None,
) -> _T | None:
    value = data.get(key)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, kind):
        names = {int: "a whole number", float: "a number", str: "a string"}
        raise ConfigError(f"{where}: '{key}' must be {names.get(kind, kind.__name__)}")
    if minimum is not None and isinstance(value, (int, float)) and value < minimum:
        raise ConfigError(f"{where}: '{key}' must be at least {minimum:g}")
    return value
