"""The secrets an agent knows: keys of its environment, env files and agent file, for redaction."""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ollie_nb.core._config import AgentConfig, expand_vars
from ollie_nb.llm import LLMConfigError, env_file_path, ollie_env_file_path
from ollie_nb.llm._settings import read_env_file
from ollie_nb.redaction import (
    MIN_DETECTED_CHARS,
    is_secret_name,
    is_secret_value,
    redact,
    url_credentials,
)

ENVIRON_TTL = 1.0  # seconds at most between two reads of the environment by one Redactor


@functools.lru_cache(maxsize=1024)
def _secret_name(name: str) -> bool:
    return is_secret_name(name)


class _EnvironChanges:
    """Counts changes to the environment, seen through Python's audit events.

    Every change to os.environ goes through os.putenv or os.unsetenv, which raise the
    audit events `os.putenv` and `os.unsetenv`; counting them tells a reader whether
    the environment may have changed without reading all of it (reading and decoding
    every variable costs more than redacting a tool result).
    """

    EVENTS = frozenset({"os.putenv", "os.unsetenv"})

    def __init__(self) -> None:
        self.count = 0
        self.started = False

    def start(self) -> None:
        """Install the audit hook, once: the first Redactor does (importing installs none;
        an audit hook lasts as long as the process)."""
        if not self.started:
            sys.addaudithook(self)
            self.started = True

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        if event in self.EVENTS:
            self.count += 1


_changes = _EnvironChanges()


class Redactor:
    """An agent's redaction: `redact` with the secrets the agent knows now.

    Known secrets: values of secret-named environment variables and of the env files
    ollie_nb reads (its own and ollie's, whichever backend is active; 4 characters or
    more, as a short password is still a password), credentials inside URLs in those
    (8 or more, as detection takes them), and `extra()` (the chat backend's key, the
    agent file's secret-named `env` values).
    """

    def __init__(self, extra: Callable[[], Iterable[str | None]] = tuple) -> None:
        _changes.start()
        self._extra = extra
        self._from_environ: set[str] = set()
        self._changes_seen = -1
        self._read_at = -ENVIRON_TTL

    def refresh(self) -> None:
        """Read the environment's secrets again if it changed (AgentCore calls this at the
        start of every turn, and every redaction does).

        A change is seen by its audit event (no scan while there is none). The event comes
        just before os.environ holds the new value, so a read at that very moment can miss
        it: a scan at least every ENVIRON_TTL seconds closes that gap.
        """
        if _changes.count != self._changes_seen or time.monotonic() - self._read_at > ENVIRON_TTL:
            self._scan()

    def _scan(self) -> None:
        # The count is taken before the read: a change made during the read is seen next time.
        self._changes_seen = _changes.count
        found: set[str] = set()
        for settings in [dict(os.environ), *(_settings(p) for p in _env_files())]:
            found.update(v for k, v in settings.items() if _secret_name(k) and is_secret_value(v))
            for value in settings.values():
                if "://" in value:
                    found.update(c for c in url_credentials(value) if len(c) >= MIN_DETECTED_CHARS)
        self._from_environ, self._read_at = found, time.monotonic()

    def _environ_secrets(self) -> set[str]:
        self.refresh()
        return self._from_environ

    def values(self, text: str = "") -> list[str]:
        """The secret values known now (and those written inside URLs in `text`)."""
        found = set(self._environ_secrets())
        if "://" in text:
            found.update(c for c in url_credentials(text) if len(c) >= MIN_DETECTED_CHARS)
        found.update(v for v in self._extra() if isinstance(v, str) and is_secret_value(v))
        return sorted(found, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        """`text` with the known secrets and everything that looks like one as the mask: for
        what people see or files keep (events, traces, messages, approvals, hook output)."""
        return redact(text, self.values(text))

    def known_only(self, text: str) -> str:
        """`text` with the known secrets as the mask, the rest as written: for what the model
        reads (a tool's result: source it may edit) and the session, saved every turn."""
        return redact(text, self.values(text), detect=False)

    def known_only_once(self) -> OnceRedaction:
        """`known_only` with the known secrets collected once, for the many strings of one
        save (collecting them per string made a 10,000-message save take seconds)."""
        return OnceRedaction(self, self.values())


class OnceRedaction:
    """One save's `known_only`: the secrets known when it began, and their digests, so a
    file appended to can tell when a secret became known after its earlier lines."""

    def __init__(self, redactor: Redactor, known: list[str]) -> None:
        self._redactor, self._known = redactor, known
        self.digests = frozenset(hashlib.sha256(s.encode()).hexdigest() for s in known)

    def __call__(self, text: str) -> str:
        if "://" in text:
            return self._redactor.known_only(text)  # credentials written inside a URL in it
        if not any(secret in text for secret in self._known):
            return text
        return redact(text, self._known, detect=False)


def _env_files() -> list[Path]:
    """The env files ollie_nb reads settings from (OLLIE_ENV_FILE alone when set)."""
    own = env_file_path()
    return [own] if os.environ.get("OLLIE_ENV_FILE") else [own, ollie_env_file_path()]


def _settings(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    try:
        return read_env_file(path)
    except LLMConfigError:
        return {}


def config_secrets(config: AgentConfig) -> list[str]:
    """The secret-named values of an agent file's `env` maps (its MCP servers' settings),
    with `${VAR}` references expanded as the servers get them."""
    return [
        expand_vars(value, os.environ)
        for server in config.mcp_servers.values()
        for name, value in server.env.items()
        if value and _secret_name(name)
    ]
