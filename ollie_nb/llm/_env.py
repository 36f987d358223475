"""Choosing a chat backend by name or from OLLIE_* settings (environment, then an env file)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ollie_nb.llm._anthropic import AnthropicBackend
from ollie_nb.llm._backend import Backend
from ollie_nb.llm._errors import LLMConfigError, MissingExtraError
from ollie_nb.llm._offline import OFFLINE_MODEL, OfflineBackend
from ollie_nb.llm._ollama import OllamaBackend
from ollie_nb.llm._openai import OpenAIBackend

OPENROUTER_URL = "https://openrouter.ai/api/v1"

DEFAULT_MODELS: dict[str, str] = {
    "offline": OFFLINE_MODEL,
    "openai": "gpt-4o-mini",
    "openrouter": "openai/gpt-4o-mini",
    "anthropic": "claude-sonnet-4-6",
    "ollama": "llama3.1",
}
BACKEND_NAMES: tuple[str, ...] = tuple(DEFAULT_MODELS)

# Without OLLIE_BACKEND, the first of these that is set picks the backend.
_INFERRED = (
    ("OLLIE_OPENAI_URL", "openai"),
    ("OLLIE_OPENAI_KEY", "openai"),
    ("OLLIE_OLLAMA_URL", "ollama"),
    ("OPENAI_API_KEY", "openai"),
    ("ANTHROPIC_API_KEY", "anthropic"),
    ("OPENROUTER_API_KEY", "openrouter"),
)


def env_file_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the optional env file lives: $OLLIE_ENV_FILE, else <user config dir>/ollie_nb/env."""
    env = os.environ if env is None else env
    if env.get("OLLIE_ENV_FILE"):
        return Path(env["OLLIE_ENV_FILE"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("ollie_nb")) / "env"


def read_env_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """`KEY=VALUE` lines of an env file; `#` comment lines, blanks and `export ` are allowed."""
    values: dict[str, str] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise LLMConfigError(f"cannot read env file {path}: {err.strerror or err}") from None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key = key.strip().removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if key:
            values[key] = value
    return values


def make_backend(
    name: str, model: str | None = None, *, env: Mapping[str, str] | None = None, **kwargs: Any
) -> Backend:
    """A backend by name: offline, openai, openrouter, anthropic or ollama.

    `kwargs` go to the backend's class; connection settings left out (key, URL) come from
    the same OLLIE_* / provider variables and env file as in backend_from_env.
    """
    key = _backend_name(name)
    settings, _, _, _ = _load_settings(env)
    return _make(key, model, {**_connection_kwargs(key, settings), **kwargs})


def _backend_name(name: str) -> str:
    key = name.strip().lower()
    if key not in DEFAULT_MODELS:
        raise LLMConfigError(
            f"unknown chat backend {name!r}; choose one of: {', '.join(BACKEND_NAMES)}"
        )
    return key


def _load_settings(env: Mapping[str, str] | None) -> tuple[dict[str, str], set[str], Path, str]:
    """Settings (environment over env file), the names taken from the file, its path, and a
    note when a named env file is missing."""
    env = os.environ if env is None else env
    path = env_file_path(env)
    from_file: dict[str, str] = {}
    note = ""
    if path.is_file():
        from_file = read_env_file(path)
    elif env.get("OLLIE_ENV_FILE"):
        note = f"env file {path} not found; "
    settings = {**from_file, **{k: v for k, v in env.items() if v}}
    return settings, {k for k in from_file if not env.get(k)}, path, note


def _connection_kwargs(name: str, settings: Mapping[str, str]) -> dict[str, Any]:
    """Key and URL arguments of backend `name` found in the settings."""
    get = settings.get
    found: dict[str, Any] = {}
    if name == "openai":
        found = {
            "base_url": get("OLLIE_OPENAI_URL"),
            "api_key": get("OLLIE_OPENAI_KEY") or get("OPENAI_API_KEY"),
        }
    elif name == "openrouter":
        found = {
            "base_url": get("OLLIE_OPENAI_URL"),
            "api_key": get("OLLIE_OPENAI_KEY") or get("OPENROUTER_API_KEY"),
        }
    elif name == "anthropic":
        found = {"api_key": get("ANTHROPIC_API_KEY"), "base_url": get("ANTHROPIC_BASE_URL")}
    elif name == "ollama":
        found = {"host": get("OLLIE_OLLAMA_URL")}
    return {k: v for k, v in found.items() if v}


def _make(name: str, model: str | None, kwargs: dict[str, Any]) -> Backend:
    """Build backend `name`, first checking it has what it needs to connect."""
    model = model or DEFAULT_MODELS[name]
    if name == "offline":
        return OfflineBackend(model=model, **kwargs)
    if name == "ollama":
        return OllamaBackend(model, **kwargs)
    if name == "anthropic":
        if not kwargs.get("api_key"):
            raise LLMConfigError("the anthropic backend needs ANTHROPIC_API_KEY")
        return AnthropicBackend(model, **kwargs)
    if name == "openrouter":
        if not kwargs.get("api_key"):
            raise LLMConfigError(
                "the openrouter backend needs OPENROUTER_API_KEY or OLLIE_OPENAI_KEY"
            )
        kwargs.setdefault("base_url", OPENROUTER_URL)
        return OpenAIBackend(model, name="openrouter", **kwargs)
    if not kwargs.get("api_key") and not kwargs.get("base_url"):
        raise LLMConfigError(
            "the openai backend needs OLLIE_OPENAI_KEY or OPENAI_API_KEY "
            "(or OLLIE_OPENAI_URL for a local server)"
        )
    return OpenAIBackend(model, **kwargs)


def backend_from_env(env: Mapping[str, str] | None = None) -> Backend:
    """The chat backend the OLLIE_* settings ask for; the offline model when nothing is set.

    Settings come from `env` (default: os.environ), then from the env file (see
    `env_file_path`); the environment wins. OLLIE_BACKEND names the backend; without it,
    the first of OLLIE_OPENAI_URL/KEY, OLLIE_OLLAMA_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY,
    OPENROUTER_API_KEY that is set decides. OLLIE_MODEL picks the model. The returned
    backend's `notice` is one line saying what was chosen and why, for the user to see.
    """
    settings, in_file, path, file_note = _load_settings(env)

    def where(var: str) -> str:
        return f"{var} in {path}" if var in in_file else var

    model = settings.get("OLLIE_MODEL") or None
    chosen = settings.get("OLLIE_BACKEND", "").strip()
    if chosen:
        name = _backend_name(chosen)
        backend = _make(name, model, _connection_kwargs(name, settings))
        backend.notice = (
            f"ollie_nb: {file_note}chat backend {backend.name}, model {backend.model} "
            f"(from {where('OLLIE_BACKEND')})."
        )
        return backend
    for var, name in _INFERRED:
        if settings.get(var):
            try:
                backend = _make(name, model, _connection_kwargs(name, settings))
            except MissingExtraError as err:
                offline = OfflineBackend()
                offline.notice = (
                    f"ollie_nb: {file_note}{where(var)} is set, but {err}; "
                    "using the offline demo model."
                )
                return offline
            backend.notice = (
                f"ollie_nb: {file_note}chat backend {backend.name}, model {backend.model} "
                f"(because {where(var)} is set; OLLIE_BACKEND chooses another)."
            )
            return backend
    offline = OfflineBackend()
    offline.notice = (
        f"ollie_nb: {file_note}no chat model configured, using the offline demo model; "
        f"set OLLIE_BACKEND ({', '.join(BACKEND_NAMES[1:])}) and its API key "
        f"in the environment or in {path}."
    )
    return offline
