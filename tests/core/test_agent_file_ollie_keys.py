"""ollie's current agent-file format: `prompt` as commands, generation and reasoning keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ollie_nb.core import (
    AgentConfig,
    ConfigError,
    UntrustedAgentError,
    load_agent_config,
    resolve_agent,
)
from ollie_nb.core._turn import params
from ollie_nb.llm import GenerationParams

CURRENT = {
    "prompt": ["echo 'You review code.'", "printf 'Be terse.\\n\\n'", "true", "pwd"],
    "tools": False,
    "topK": 40,
    "minP": 0.05,
    "reasoningEffort": "high",
    "reasoning": 8000,
    "maxCompletionTokens": 16000,
    "promptCache": False,
    "maxTokens": 4096,
    "topA": 0.1,  # a key ollie knows and ollie_nb does not
}


def write(directory: Path, data: object, name: str = "reviewer.json") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_current_format_loads_and_reaches_the_generation_params(tmp_path):
    config = load_agent_config(write(tmp_path, CURRENT))
    assert config.prompt == "" and config.prompt_commands == tuple(CURRENT["prompt"])
    assert config.warnings == (f"{tmp_path / 'reviewer.json'}: unknown key 'topA' ignored",)
    assert params(config) == GenerationParams(
        max_tokens=4096,
        top_k=40,
        min_p=0.05,
        reasoning_effort="high",
        thinking_budget=8000,
        max_completion_tokens=16000,
        prompt_cache=False,
    )
    assert config.tools is False
    assert AgentConfig().tools and AgentConfig().prompt_cache  # both on by default


@pytest.mark.anyio
async def test_prompt_commands_run_once_in_the_workdir_and_form_the_prompt(make_core, tmp_path):
    path = write(tmp_path / "agents", CURRENT)
    work = tmp_path / "work"
    work.mkdir()
    config = resolve_agent(str(path), str(work))
    assert config.prompt == f"You review code.\nBe terse.\n{work}"
    assert config.prompt_commands == ()
    core = await make_core(agent=str(path), workdir=work)
    assert core.system_prompt().endswith(f"You review code.\nBe terse.\n{work}")


def test_a_failing_prompt_command_names_itself(tmp_path):
    path = write(tmp_path, {"prompt": ["echo fine", "echo broken >&2; exit 3"]})
    with pytest.raises(ConfigError) as info:
        resolve_agent(str(path), str(tmp_path))
    assert "prompt command 'echo broken >&2; exit 3' exited 3: broken" in str(info.value)


def test_an_untrusted_project_agent_runs_no_prompt_command(tmp_path):
    marker = tmp_path / "ran"
    write(tmp_path / ".ollie" / "agents", {"prompt": [f"touch {marker}"]}, "proj.json")
    with pytest.raises(UntrustedAgentError) as info:
        resolve_agent("proj", str(tmp_path))
    assert f"prompt commands: touch {marker}" in str(info.value)
    assert not marker.exists()
    trusted = resolve_agent("proj", str(tmp_path), trust=True)
    assert marker.exists() and trusted.prompt == ""


def test_a_string_prompt_stays_literal(tmp_path):
    config = resolve_agent(str(write(tmp_path, {"prompt": "echo not run"})), str(tmp_path))
    assert (config.prompt, config.prompt_commands) == ("echo not run", ())
