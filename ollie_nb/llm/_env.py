"""Choosing a chat backend by name or from OLLIE_* settings (environment, then an env file)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ollie_nb.llm._anthropic import ANTHROPIC_URL, AnthropicBackend
from ollie_nb.llm._backend import Backend
from ollie_nb.llm._errors import LLMConfigError, MissingExtraError
from ollie_nb.llm._offline import OFFLINE_MODEL, OfflineBackend
from ollie_nb.llm._ollama import OLLAMA_URL, OllamaBackend
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


def make_backend(name: str, model: str | None = None, **kwargs: Any) -> Backend:
    """A backend by name (offline, openai, openrouter, anthropic, ollama); kwargs go to its class."""
    key = name.strip().lower()
    if key not in DEFAULT_MODELS:
        raise LLMConfigError(
            f"unknown chat backend {name!r}; choose one of: {', '.join(BACKEND_NAMES)}"
        )
    model = model or DEFAULT_MODELS[key]
    if key == "offline":
        return OfflineBackend(model=model, **kwargs)
    if key == "openai":
        return OpenAIBackend(model, **kwargs)
    if key == "openrouter":
        kwargs.setdefault("base_url", OPENROUTER_URL)
        return OpenAIBackend(model, name="openrouter", **kwargs)
    if key == "anthropic":
        return AnthropicBackend(model, **kwargs)
    return OllamaBackend(model, **kwargs)


def _backend_kwargs(name: str, settings: Mapping[str, str]) -> dict[str, Any]:
    """Constructor arguments of backend `name` out of the settings, checking what it needs."""
    get = settings.get
    if name == "openai":
        url, key = get("OLLIE_OPENAI_URL"), get("OLLIE_OPENAI_KEY") or get("OPENAI_API_KEY")
        if not url and not key:
            raise LLMConfigError(
                "the openai backend needs OLLIE_OPENAI_KEY or OPENAI_API_KEY "
                "(or OLLIE_OPENAI_URL for a local server)"
            )
        return {"base_url": url or None, "api_key": key or None}
    if name == "openrouter":
        key = get("OLLIE_OPENAI_KEY") or get("OPENROUTER_API_KEY")
        if not key:
            raise LLMConfigError(
                "the openrouter backend needs OPENROUTER_API_KEY or OLLIE_OPENAI_KEY"
            )
        return {"base_url": get("OLLIE_OPENAI_URL") or OPENROUTER_URL, "api_key": key}
    if name == "anthropic":
        key = get("ANTHROPIC_API_KEY")
        if not key:
            raise LLMConfigError("the anthropic backend needs ANTHROPIC_API_KEY")
        return {"api_key": key, "base_url": get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL}
    if name == "ollama":
        return {"host": get("OLLIE_OLLAMA_URL") or OLLAMA_URL}
    return {}


def backend_from_env(env: Mapping[str, str] | None = None) -> Backend:
    """The chat backend the OLLIE_* settings ask for; the offline model when nothing is set.

    Settings come from `env` (default: os.environ), then from the env file (see
    `env_file_path`); the environment wins. OLLIE_BACKEND names the backend; without it,
    the first of OLLIE_OPENAI_URL/KEY, OLLIE_OLLAMA_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY,
    OPENROUTER_API_KEY that is set decides. OLLIE_MODEL picks the model. The returned
    backend's `notice` is one line saying what was chosen and why, for the user to see.
    """
    env = os.environ if env is None else env
    path = env_file_path(env)
    from_file: dict[str, str] = {}
    file_note = ""
    if path.is_file():
        from_file = read_env_file(path)
    elif env.get("OLLIE_ENV_FILE"):
        file_note = f"env file {path} not found; "
    settings = {**from_file, **{k: v for k, v in env.items() if v}}

    def where(var: str) -> str:
        return f"{var} in {path}" if var in from_file and not env.get(var) else var

    model = settings.get("OLLIE_MODEL") or None
    chosen = (settings.get("OLLIE_BACKEND") or "").strip().lower()
    if chosen:
        backend = make_backend(chosen, model, **_backend_kwargs(chosen, settings))
        backend.notice = (
            f"ollie_nb: {file_note}chat backend {backend.name}, model {backend.model} "
            f"(from {where('OLLIE_BACKEND')})."
        )
        return backend
    for var, name in _INFERRED:
        if settings.get(var):
            try:
                backend = make_backend(name, model, **_backend_kwargs(name, settings))
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
