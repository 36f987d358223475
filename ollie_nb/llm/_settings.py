"""Choosing a chat backend by name or from OLLIE_* settings (environment, then env files)."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ollie_nb.llm._backend import Backend
from ollie_nb.llm._errors import LLMConfigError, MissingExtraError
from ollie_nb.llm._offline import OFFLINE_MODEL, OfflineBackend

if TYPE_CHECKING:  # a remote provider's module loads when that provider is made
    from ollie_nb.llm._anthropic import AnthropicBackend
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
    ("OLLIE_ANTHROPIC_KEY", "anthropic"),
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


def ollie_env_file_path(env: Mapping[str, str] | None = None) -> Path:
    """Where ollie keeps its env file: $XDG_CONFIG_HOME/ollie/env, else ~/.config/ollie/env."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(config).expanduser() / "ollie" / "env"


def read_env_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """The settings of a dotenv file, parsed by python-dotenv.

    `export `, quotes, escapes in double quotes and inline `# comments` work as in
    other tools; `${VAR}` is kept literally (a key may contain `$`). Lines without
    `=` are ignored.
    """
    from dotenv import dotenv_values

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise LLMConfigError(f"cannot read env file {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise LLMConfigError(f"cannot read env file {path}: it is not UTF-8 text") from None
    values = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {key: value for key, value in values.items() if key and value is not None}


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


def _load_settings(
    env: Mapping[str, str] | None,
) -> tuple[dict[str, str], dict[str, Path], Path, str]:
    """Settings, which env file each file-borne one came from, ollie_nb's env file path, and
    a note when a named env file is missing.

    The environment wins over ollie_nb's env file, which wins over ollie's own
    (`~/.config/ollie/env`), so an ollie user's settings work unchanged. A file named by
    OLLIE_ENV_FILE is read alone: naming one keeps every other file out.
    """
    env = os.environ if env is None else env
    path = env_file_path(env)
    files = [path] if env.get("OLLIE_ENV_FILE") else [path, ollie_env_file_path(env)]
    note = "" if path.is_file() or not env.get("OLLIE_ENV_FILE") else f"env file {path} not found; "
    origin: dict[str, Path] = {}
    from_files: dict[str, str] = {}
    for file in files:
        if file.is_file():
            for key, value in read_env_file(file).items():
                if key not in from_files:
                    from_files[key], origin[key] = value, file
    given = {k: v for k, v in env.items() if v}
    origin = {k: f for k, f in origin.items() if k not in given}
    return {**from_files, **given}, origin, path, note


# A version segment (v1, v1beta, v2) anywhere in the path: the URL already names its API root.
_API_VERSION = re.compile(r"/v\d+[a-z]*(/|$)")


def openai_base_url(url: str) -> str:
    """OLLIE_OPENAI_URL as the OpenAI client wants it: with or without `/v1` both work.

    ollie writes the URL without `/v1` (`https://openrouter.ai/api`) and adds it to
    each request; the OpenAI SDK wants it in the base URL. A URL whose path already
    names a version is kept as given.
    """
    url = url.strip().rstrip("/")
    return url if _API_VERSION.search(url.split("://", 1)[-1]) else f"{url}/v1"


def _connection_kwargs(name: str, settings: Mapping[str, str]) -> dict[str, Any]:
    """Key and URL arguments of backend `name` found in the settings."""
    get = settings.get
    found: dict[str, Any] = {}
    url = get("OLLIE_OPENAI_URL")
    if name == "openai":
        found = {
            "base_url": url and openai_base_url(url),
            "api_key": get("OLLIE_OPENAI_KEY") or get("OPENAI_API_KEY"),
        }
    elif name == "openrouter":
        found = {
            "base_url": url and openai_base_url(url),
            "api_key": get("OLLIE_OPENAI_KEY") or get("OPENROUTER_API_KEY"),
        }
    elif name == "anthropic":
        found = {
            "api_key": get("OLLIE_ANTHROPIC_KEY") or get("ANTHROPIC_API_KEY"),
            "base_url": get("ANTHROPIC_BASE_URL"),
        }
    elif name == "ollama":
        found = {"host": get("OLLIE_OLLAMA_URL")}
    return {k: v for k, v in found.items() if v}


def _make(
    name: str, model: str | None, kwargs: dict[str, Any]
) -> OfflineBackend | OllamaBackend | AnthropicBackend | OpenAIBackend:
    """Build backend `name`, first checking it has what it needs to connect."""
    model = model or DEFAULT_MODELS[name]
    if name == "offline":
        return OfflineBackend(model=model, **kwargs)
    if name == "ollama":
        from ollie_nb.llm._ollama import OllamaBackend

        return OllamaBackend(model, **kwargs)
    from ollie_nb.llm._openai import OpenAIBackend

    if name == "anthropic":
        from ollie_nb.llm._anthropic import AnthropicBackend

        if not kwargs.get("api_key"):
            raise LLMConfigError(
                "the anthropic backend needs OLLIE_ANTHROPIC_KEY or ANTHROPIC_API_KEY"
            )
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
    `env_file_path`), then from ollie's `~/.config/ollie/env`; the first to set a name
    wins. OLLIE_BACKEND names the backend; without it, the first of OLLIE_OPENAI_URL/KEY,
    OLLIE_OLLAMA_URL, OLLIE_ANTHROPIC_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY,
    OPENROUTER_API_KEY that is set decides. OLLIE_MODEL picks the model. The returned
    backend's `notice` is one line saying what was chosen and why, for the user to see.
    """
    settings, origin, path, file_note = _load_settings(env)

    def where(var: str) -> str:
        return f"{var} in {origin[var]}" if var in origin else var

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
                f"(because {where(var)} is set and OLLIE_BACKEND is not; set OLLIE_BACKEND to choose "
                "another)."
            )
            return backend
    offline = OfflineBackend()
    offline.notice = (
        f"ollie_nb: {file_note}no chat model configured, using the offline demo model; "
        f"set OLLIE_BACKEND ({', '.join(BACKEND_NAMES[1:])}) and its API key "
        f"in the environment or in {path}."
    )
    return offline
