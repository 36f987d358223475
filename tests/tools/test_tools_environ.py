"""Subprocesses of tools never see the kernel's secrets; the secret-name rule and URL credentials."""

from __future__ import annotations

import pytest

from ollie_nb.redaction import is_secret_name, url_credentials
from ollie_nb.tools import ExecuteServer, subprocess_environ


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "OPENAI_API_KEY_2",
        "ANTHROPIC_API_KEY",
        "OLLIE_OPENAI_KEY",
        "GH_PAT",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "MYSQL_PASSWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AZURE_CREDENTIAL",
        "apikey",
        "Db_Password",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "HTTP_AUTHORIZATION",
        "SESSION_COOKIE",
        "browser_cookies",
    ],
)
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "HOME",
        "PWD",
        "SSH_AUTH_SOCK",
        "TOKENIZERS_PARALLELISM",
        "KEYRING_BACKEND",
        "LANG",
        "OLLIE_SESSION_ID",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "HEADER_ROWS",
    ],
)
def test_ordinary_names(name):
    assert not is_secret_name(name)


def test_url_credentials_finds_passwords_and_token_users_only():
    text = (
        "db at postgresql://app:s3cr%40t@db.local:5432/x, "
        "clone https://ghp_abcdefghijklmnopqrstuvwx@github.com/o/r.git, "
        "push ssh://git@github.com/o/r and see https://example.com/a@b"
    )
    assert url_credentials(text) == ["s3cr%40t", "ghp_abcdefghijklmnopqrstuvwx"]
    assert url_credentials("no urls here: user@host, a:b@c") == []


@pytest.mark.parametrize(
    "text",
    [
        "x" * 40 + "https://app:s3cretpw@db/x",  # a scheme at the end of a long run
        "12+postgresql://app:s3cretpw@db/x",  # a run that starts with no letter
        "see a://b/c then postgresql://app:s3cretpw@db/x",
        "a://b?c=d and postgresql://app@db/x?password=s3cretpw",
    ],
)
def test_url_credentials_after_long_runs_and_other_urls_are_found(text):
    assert url_credentials(text) == ["s3cretpw"]


def test_subprocess_env_drops_secret_names_values_and_url_passwords_keeps_passthrough():
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "OPENAI_API_KEY": "sk-one",
        "GH_PAT": "ghp-two",
        "MODEL_SETTINGS": "uses sk-backend-key inside",
        "DATABASE_URL": "postgresql://app:pw@db/x",
        "HF_TOKEN": "hf-three",
    }
    env = subprocess_environ(base, secrets=["sk-backend-key", "", None], passthrough=["HF_TOKEN"])
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "HF_TOKEN": "hf-three"}


@pytest.mark.anyio
async def test_execute_code_env_shows_no_secret(tmp_path, monkeypatch):
    """A real `env` run: the keys of the kernel's environment are not in it, passthrough is."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    monkeypatch.setenv("GH_PAT", "ghp_test_0123456789")
    monkeypatch.setenv("DATABASE_URL", "postgresql://app:hunter2@db/x")
    monkeypatch.setenv("SHARED_TOKEN", "passed-on-purpose")
    monkeypatch.setenv("OLLIE_TEST_PLAIN", "plain-value")
    server = ExecuteServer(str(tmp_path), env_passthrough=["SHARED_TOKEN"], secrets=["plain-value"])
    result = await server.call_tool("execute_code", {"code": "env"})
    assert result.text.startswith("exit code 0\n")
    lines = set(result.text.splitlines()[1:])
    assert "SHARED_TOKEN=passed-on-purpose" in lines
    assert any(line.startswith("PATH=") for line in lines)
    for leaked in ("sk-test-openai", "sk-ant-test", "ghp_test", "hunter2", "plain-value"):
        assert leaked not in result.text
    names = {line.split("=", 1)[0] for line in lines if "=" in line}
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GH_PAT", "DATABASE_URL"} & names
