"""Agent JSON files: ollie's format loads; bad files give errors naming file, line and key."""

from __future__ import annotations

import json

import pytest

from ollie_nb.core import AgentConfig, ConfigError, expand_vars, load_agent_config


def write(tmp_path, text, name="agent.json"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_full_ollie_config_loads(tmp_path):
    path = write(
        tmp_path,
        json.dumps(
            {
                "prompt": "Be brief.",
                "mcpServers": {
                    "task": {"command": "9beads-mcp", "env": {"PWD": "$PWD"}},
                    "web": {"url": "http://127.0.0.1:9000/mcp", "disabled": True},
                },
                "hooks": {"agentSpawn": ["echo hi"], "stop": [{"command": "true"}]},
                "trustedTools": ["file_read"],
                "maxTokens": 1000,
                "temperature": 0.2,
                "frequencyPenalty": 0,
                "presencePenalty": 0.5,
                "maxSteps": 12,
            }
        ),
        "researcher.json",
    )
    config = load_agent_config(path)
    assert config.name == "researcher"
    assert config.prompt == "Be brief."
    assert config.mcp_servers["task"].command == "9beads-mcp"
    assert config.mcp_servers["task"].env == {"PWD": "$PWD"}
    assert config.mcp_servers["web"].disabled
    assert config.hooks == {"agentSpawn": ("echo hi",), "stop": ("true",)}
    assert config.trusted_tools == ("file_read",)
    assert (config.max_tokens, config.temperature, config.max_steps) == (1000, 0.2, 12)
    assert config.frequency_penalty == 0.0
    assert config.warnings == ()


def test_invalid_json_names_file_line_and_column(tmp_path):
    path = write(tmp_path, '{\n  "prompt": "x",\n  "maxTokens": ,\n}')
    with pytest.raises(ConfigError) as info:
        load_agent_config(path)
    assert str(info.value).startswith(f"{path}:3:16: invalid JSON")


def test_unknown_keys_warn_once_each(tmp_path):
    config = AgentConfig.from_dict(
        {"promt": "typo", "mcpServers": {"s": {"command": "x", "cmd": "y"}}}, "a.json"
    )
    assert config.warnings == (
        "a.json: unknown key 'promt' ignored",
        "a.json: mcpServers.s: unknown key 'cmd' ignored",
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "the top level must be a JSON object"),
        ({"mcpServers": []}, "'mcpServers' must be an object"),
        ({"mcpServers": {"s": "cmd"}}, "mcpServers.s must be an object"),
        ({"mcpServers": {"s": {}}}, "needs 'command' (stdio) or 'url'"),
        ({"mcpServers": {"s": {"command": "  "}}}, "needs 'command'"),
        ({"mcpServers": {"s": {"command": "a", "url": "b"}}}, "not both"),
        ({"mcpServers": {"s": {"command": 5}}}, "must be strings"),
        ({"mcpServers": {"s": {"command": "a", "args": "x y"}}}, "args must be a list"),
        ({"mcpServers": {"s": {"command": "a", "env": ["A=1"]}}}, "env must be an object"),
        ({"mcpServers": {"s": {"command": "a", "disabled": "no"}}}, "true or false"),
        ({"mcpServers": {"s": {"command": "a", "timeout": -1}}}, "'timeout' must be at least"),
        ({"maxTokens": "100"}, "'maxTokens' must be a whole number"),
        ({"maxTokens": 1.5}, "'maxTokens' must be a whole number"),
        ({"temperature": "hot"}, "'temperature' must be a number"),
        ({"maxSteps": 0}, "'maxSteps' must be at least 1"),
        ({"prompt": 5}, "'prompt' must be a string or an array of shell commands"),
        ({"prompt": ["echo a", 3]}, "'prompt' as an array must hold shell commands"),
        ({"topK": 0.5}, "'topK' must be a whole number"),
        ({"minP": "low"}, "'minP' must be a number"),
        ({"reasoningEffort": 2}, "'reasoningEffort' must be a string"),
        ({"maxCompletionTokens": 0}, "'maxCompletionTokens' must be at least 1"),
        ({"tools": "no"}, "'tools' must be true or false"),
        ({"promptCache": 1}, "'promptCache' must be true or false"),
        ({"trustedTools": "all"}, "'trustedTools' must be a list"),
        ({"hooks": {"onStart": ["x"]}}, "hooks.onStart is not a hook event"),
        ({"hooks": {"stop": [3]}}, "hooks.stop must be a shell command, an array of them, or"),
        ({"hooks": "x"}, "'hooks' must be an object"),
    ],
)
def test_bad_config_values(data, message):
    with pytest.raises(ConfigError) as info:
        AgentConfig.from_dict(data, "bad.json")
    assert message in str(info.value)
    assert str(info.value).startswith("bad.json")


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such agent config file"):
        load_agent_config(tmp_path / "nope.json")


def test_expand_vars_like_go():
    env = {"HOME": "/home/a", "X": "1"}
    missing: list[str] = []
    assert expand_vars("$HOME/${X}/$NOPE/${NOPE}/$$", env, missing) == "/home/a/1///$$"
    assert missing == ["NOPE"]


def test_claim_lease_defaults_to_a_minute_takes_zero_and_refuses_negative_or_over_a_week():
    from ollie_nb.core import AgentConfig, ConfigError

    assert AgentConfig.from_dict({}).claim_lease == 60
    assert AgentConfig.from_dict({"claimLease": 0}).claim_lease == 0
    assert AgentConfig.from_dict({"claimLease": 2.5}).claim_lease == 2.5
    for bad in (-1, 8 * 24 * 3600, "soon"):
        try:
            AgentConfig.from_dict({"claimLease": bad}, "a.json")
        except ConfigError as exc:
            assert "claimLease" in str(exc)
        else:
            raise AssertionError(f"claimLease {bad!r} was taken")
