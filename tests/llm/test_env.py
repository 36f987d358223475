"""backend_from_env / make_backend: settings from the environment and the env file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ollie_nb.llm import (
    AnthropicBackend,
    LLMConfigError,
    Message,
    MissingExtraError,
    OfflineBackend,
    OllamaBackend,
    OpenAIBackend,
    TextDelta,
    backend_from_env,
    env_file_path,
    make_backend,
    ollie_env_file_path,
    openai_base_url,
)
from ollie_nb.llm._settings import read_env_file
from tests.support.llm_fake_provider import FAKE_KEY, FakeProvider, Reply, collect, sse

CHOOSE = "set OLLIE_BACKEND to choose another"


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    """An empty env file; point OLLIE_ENV_FILE at it."""
    path = tmp_path / "env"
    path.write_text("")
    return path


def settings(env_file: Path, **values: str) -> dict[str, str]:
    return {"OLLIE_ENV_FILE": str(env_file), **values}


def test_nothing_configured_gives_the_offline_model_and_a_notice(env_file: Path):
    env_file.write_text("# nothing here yet\n")
    b = backend_from_env(settings(env_file))
    assert isinstance(b, OfflineBackend)
    assert b.model == "offline-planner"
    assert b.notice == (
        "ollie_nb: no chat model configured, using the offline demo model; set OLLIE_BACKEND "
        f"(openai, openrouter, anthropic, ollama) and its API key in the environment or in {env_file}."
    )


def test_env_file_path_defaults_to_the_user_config_dir():
    default = env_file_path({})
    assert default.name == "env" and default.parent.name == "ollie_nb"
    assert env_file_path({"OLLIE_ENV_FILE": "/tmp/x.env"}) == Path("/tmp/x.env")


def test_missing_named_env_file_is_mentioned(tmp_path: Path):
    missing = tmp_path / "nowhere.env"
    b = backend_from_env(settings(missing))
    assert b.notice.startswith(f"ollie_nb: env file {missing} not found; no chat model")


@pytest.mark.parametrize(
    ("values", "cls", "name", "model", "where"),
    [
        (
            {"OLLIE_BACKEND": "openai", "OPENAI_API_KEY": FAKE_KEY},
            OpenAIBackend,
            "openai",
            "gpt-4o-mini",
            "https://api.openai.com/v1",
        ),
        (
            {"OLLIE_BACKEND": "OpenRouter", "OPENROUTER_API_KEY": FAKE_KEY, "OLLIE_MODEL": "x/y"},
            OpenAIBackend,
            "openrouter",
            "x/y",
            "https://openrouter.ai/api/v1",
        ),
        (
            {"OLLIE_BACKEND": "anthropic", "ANTHROPIC_API_KEY": FAKE_KEY},
            AnthropicBackend,
            "anthropic",
            "claude-sonnet-4-6",
            "https://api.anthropic.com",
        ),
        (
            {"OLLIE_BACKEND": "ollama", "OLLIE_OLLAMA_URL": "http://gpu:11434/"},
            OllamaBackend,
            "ollama",
            "llama3.1",
            "http://gpu:11434",
        ),
        (
            {"OLLIE_BACKEND": "ollama"},
            OllamaBackend,
            "ollama",
            "llama3.1",
            "http://localhost:11434",
        ),
        ({"OLLIE_BACKEND": "offline"}, OfflineBackend, "offline", "offline-planner", None),
    ],
)
def test_explicit_backend(env_file: Path, values, cls, name, model, where):
    b = backend_from_env(settings(env_file, **values))
    assert type(b) is cls
    assert (b.name, b.model) == (name, model)
    if where is not None:
        assert (b.host if isinstance(b, OllamaBackend) else b.base_url) == where
    assert b.notice == f"ollie_nb: chat backend {name}, model {model} (from OLLIE_BACKEND)."
    assert FAKE_KEY not in repr(b) and FAKE_KEY not in b.notice


@pytest.mark.parametrize(
    ("values", "cls", "name", "because"),
    [
        (
            {"OLLIE_OPENAI_URL": "http://127.0.0.1:8080/v1"},
            OpenAIBackend,
            "openai",
            "OLLIE_OPENAI_URL",
        ),
        (
            {"OLLIE_OLLAMA_URL": "http://127.0.0.1:11434"},
            OllamaBackend,
            "ollama",
            "OLLIE_OLLAMA_URL",
        ),
        (
            {"OPENAI_API_KEY": FAKE_KEY, "ANTHROPIC_API_KEY": FAKE_KEY},
            OpenAIBackend,
            "openai",
            "OPENAI_API_KEY",
        ),
        ({"ANTHROPIC_API_KEY": FAKE_KEY}, AnthropicBackend, "anthropic", "ANTHROPIC_API_KEY"),
        ({"OPENROUTER_API_KEY": FAKE_KEY}, OpenAIBackend, "openrouter", "OPENROUTER_API_KEY"),
    ],
)
def test_inferred_backend(env_file: Path, values, cls, name, because):
    b = backend_from_env(settings(env_file, **values))
    assert (type(b), b.name) == (cls, name)
    assert (
        f"(because {because} is set and OLLIE_BACKEND is not; set OLLIE_BACKEND to choose another)"
        in b.notice
    )
    assert FAKE_KEY not in b.notice


def test_ollie_openai_key_and_url_reach_the_server(env_file: Path, provider: FakeProvider):
    provider.queue(
        Reply(
            chunks=[
                sse(
                    {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
                ),
                sse("[DONE]"),
            ]
        )
    )
    b = backend_from_env(
        settings(
            env_file,
            OLLIE_OPENAI_URL=provider.url + "/v1",
            OLLIE_OPENAI_KEY=FAKE_KEY,
            OPENAI_API_KEY="sk-other",
            OLLIE_MODEL="local-model",
        )
    )
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]
    (request,) = provider.requests
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert request.body["model"] == "local-model"


def test_env_file_is_parsed_and_the_environment_wins(env_file: Path):
    env_file.write_text(
        "# ollie_nb settings\n"
        "\n"
        "export OLLIE_BACKEND=ollama\n"
        "OLLIE_OLLAMA_URL = 'http://from-file:11434'\n"
        'OLLIE_MODEL="qwen3:8b"\n'
        "this line has no equals sign\n"
    )
    b = backend_from_env(settings(env_file))
    assert isinstance(b, OllamaBackend)
    assert (b.host, b.model) == ("http://from-file:11434", "qwen3:8b")
    assert b.notice == (
        f"ollie_nb: chat backend ollama, model qwen3:8b (from OLLIE_BACKEND in {env_file})."
    )
    b = backend_from_env(
        settings(env_file, OLLIE_MODEL="llama3.2", OLLIE_OLLAMA_URL="http://env:1")
    )
    assert (b.host, b.model) == ("http://env:1", "llama3.2")


def test_inferred_from_a_key_in_the_env_file(env_file: Path):
    env_file.write_text(f"ANTHROPIC_API_KEY={FAKE_KEY}\n")
    b = backend_from_env(settings(env_file))
    assert isinstance(b, AnthropicBackend)
    assert f"because ANTHROPIC_API_KEY in {env_file} is set" in b.notice
    assert FAKE_KEY not in b.notice


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        ("openai", "the openai backend needs OLLIE_OPENAI_KEY or OPENAI_API_KEY"),
        ("openrouter", "the openrouter backend needs OPENROUTER_API_KEY or OLLIE_OPENAI_KEY"),
        ("anthropic", "the anthropic backend needs OLLIE_ANTHROPIC_KEY or ANTHROPIC_API_KEY"),
        ("gemini", "unknown chat backend 'gemini'; choose one of: offline, openai, openrouter"),
    ],
)
def test_explicit_backend_without_what_it_needs_is_a_clear_error(env_file, backend, message):
    with pytest.raises(LLMConfigError) as info:
        backend_from_env(settings(env_file, OLLIE_BACKEND=backend))
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("module", "backend", "key"),
    [
        ("openai", "openai", "OPENAI_API_KEY"),
        ("anthropic", "anthropic", "ANTHROPIC_API_KEY"),
    ],
)
def test_missing_sdk_names_the_pip_extra(env_file, monkeypatch, module, backend, key):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` fail
    with pytest.raises(MissingExtraError) as info:
        backend_from_env(settings(env_file, OLLIE_BACKEND=backend, **{key: FAKE_KEY}))
    assert str(info.value) == (
        f"the {backend} backend needs the '{module}' package: pip install 'ollie-nb[{module}]'"
    )
    assert isinstance(info.value, ImportError)
    # Inferred from a key only: degrade to the offline model and say why.
    b = backend_from_env(settings(env_file, **{key: FAKE_KEY}))
    assert isinstance(b, OfflineBackend)
    assert f"pip install 'ollie-nb[{module}]'" in b.notice
    assert b.notice.endswith("using the offline demo model.")


def test_make_backend_by_name(env_file: Path):
    bare = settings(env_file)
    assert isinstance(make_backend("offline", env=bare), OfflineBackend)
    router = make_backend("openrouter", env=settings(env_file, OPENROUTER_API_KEY=FAKE_KEY))
    assert repr(router) == (
        "OpenAIBackend(model='openai/gpt-4o-mini', base_url='https://openrouter.ai/api/v1', "
        "key=set)"
    )
    assert router.name == "openrouter"
    local = make_backend("openai", "qwen", env=bare, base_url="http://127.0.0.1:8000/v1")
    assert repr(local) == (
        "OpenAIBackend(model='qwen', base_url='http://127.0.0.1:8000/v1', key=unset)"
    )
    # Explicit arguments win over settings.
    ollama = make_backend(
        "Ollama", "phi4", env=settings(env_file, OLLIE_OLLAMA_URL="http://a:1"), host="http://b:2"
    )
    assert (ollama.model, ollama.host) == ("phi4", "http://b:2")
    with pytest.raises(LLMConfigError, match="the openai backend needs OLLIE_OPENAI_KEY"):
        make_backend("openai", env=bare)
    with pytest.raises(LLMConfigError, match="unknown chat backend"):
        make_backend("nope", env=bare)


def test_env_file_quotes_inline_comments_and_escapes_as_dotenv_reads_them(env_file: Path):
    env_file.write_text(
        "OLLIE_BACKEND=ollama  # local model\n"
        "OLLIE_OLLAMA_URL='http://quoted:11434' # single quotes, then a comment\n"
        'OLLIE_MODEL="qwen3:8b # not a comment inside quotes"\n'
        'export SPACED = "a\\tb\\"c"\n'
        "HASH=abc#def\n"
        "DOLLAR=${HOME}x\n"
        "NO_VALUE\n"
    )
    assert read_env_file(env_file) == {
        "OLLIE_BACKEND": "ollama",
        "OLLIE_OLLAMA_URL": "http://quoted:11434",
        "OLLIE_MODEL": "qwen3:8b # not a comment inside quotes",
        "SPACED": 'a\tb"c',
        "HASH": "abc#def",
        "DOLLAR": "${HOME}x",  # kept literally: keys may contain $
    }
    b = backend_from_env(settings(env_file))
    assert (b.name, b.host, b.model) == (
        "ollama",
        "http://quoted:11434",
        "qwen3:8b # not a comment inside quotes",
    )


def test_ollie_env_file_is_read_after_our_own_and_set_values_win(tmp_path: Path, monkeypatch):
    """~/.config/ollie/env as ollie keeps it; ollie_nb's own file and the environment win."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))  # where platformdirs puts our own file
    ollie_env = config / "ollie" / "env"
    ollie_env.parent.mkdir(parents=True)
    ollie_env.write_text(
        "OLLIE_BACKEND=anthropic\nOLLIE_ANTHROPIC_KEY=sk-ant-from-ollie\nOLLIE_MODEL=from-ollie\n"
    )
    own = config / "ollie_nb" / "env"
    own.parent.mkdir(parents=True)
    own.write_text("OLLIE_MODEL=from-ollie-nb\n")
    env = {"XDG_CONFIG_HOME": str(config)}
    assert (env_file_path(env), ollie_env_file_path(env)) == (own, ollie_env)
    b = backend_from_env(env)
    assert isinstance(b, AnthropicBackend)
    assert b.model == "from-ollie-nb"  # our own file is read first
    assert b.secrets() == ("sk-ant-from-ollie",)
    assert b.notice == (
        f"ollie_nb: chat backend anthropic, model from-ollie-nb (from OLLIE_BACKEND in {ollie_env})."
    )
    assert backend_from_env({**env, "OLLIE_MODEL": "from-env"}).model == "from-env"
    home = tmp_path / "home"
    assert ollie_env_file_path({"HOME": str(home)}) == home / ".config" / "ollie" / "env"


def test_a_named_env_file_keeps_ollies_file_out(tmp_path: Path, env_file: Path):
    home = tmp_path / "home"
    (home / ".config" / "ollie").mkdir(parents=True)
    (home / ".config" / "ollie" / "env").write_text("OLLIE_BACKEND=anthropic\n")
    b = backend_from_env(settings(env_file, HOME=str(home)))
    assert isinstance(b, OfflineBackend)


def test_ollie_anthropic_key_is_accepted(env_file: Path, provider: FakeProvider):
    b = backend_from_env(
        settings(env_file, OLLIE_ANTHROPIC_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=provider.url)
    )
    assert isinstance(b, AnthropicBackend)
    assert b.notice.endswith(
        "(because OLLIE_ANTHROPIC_KEY is set and OLLIE_BACKEND is not; set OLLIE_BACKEND to choose another)."
    )
    assert b.secrets() == (FAKE_KEY,)


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("http://h:8080", "http://h:8080/v1"),
        ("http://h:8080/", "http://h:8080/v1"),
        ("http://h:8080/v1", "http://h:8080/v1"),
        ("http://h:8080/v1/", "http://h:8080/v1"),
        ("https://openrouter.ai/api", "https://openrouter.ai/api/v1"),
        ("https://api.groq.com/openai/v1", "https://api.groq.com/openai/v1"),
        ("https://g.example/v1beta/openai", "https://g.example/v1beta/openai"),
    ],
)
def test_openai_url_with_or_without_v1(given, used):
    assert openai_base_url(given) == used


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
def test_ollie_openai_url_reaches_the_server_with_or_without_v1(
    env_file: Path, provider: FakeProvider, suffix: str
):
    provider.queue(
        Reply(
            chunks=[
                sse(
                    {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
                ),
                sse("[DONE]"),
            ]
        )
    )
    b = backend_from_env(settings(env_file, OLLIE_OPENAI_URL=provider.url + suffix))
    events = collect(lambda: b.chat_stream([Message.user("hi")]))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]
    (request,) = provider.requests
    assert request.path == "/v1/chat/completions"
