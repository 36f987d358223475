"""Secret redaction: API keys and tokens never reach outputs, sessions, logs or warnings."""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Iterable

from ollie_nb.tools import is_secret_name, url_credentials

REDACTED = "***"
MIN_SECRET_CHARS = 8  # shorter values would redact ordinary words
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

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        if event in self.EVENTS:
            self.count += 1


_changes = _EnvironChanges()
sys.addaudithook(_changes)


class Redactor:
    """Replaces every known secret in a text with ***, longest first.

    Known secrets: values of secret-named environment variables, credentials inside
    URLs (in the environment or in the text itself), and `extra()` (the chat
    backend's key). Longest first: when one secret contains another, replacing the
    shorter one first would leave the rest of the longer one in the text.
    """

    def __init__(self, extra: Callable[[], Iterable[str | None]] = tuple) -> None:
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
        for name, value in os.environ.items():
            if value and _secret_name(name):
                found.add(value)
            if "://" in value:
                found.update(url_credentials(value))
        self._from_environ, self._read_at = found, time.monotonic()

    def _environ_secrets(self) -> set[str]:
        self.refresh()
        return self._from_environ

    def values(self, text: str = "") -> list[str]:
        """The secret values known now (and those written inside URLs in `text`)."""
        found = set(self._environ_secrets())
        if "://" in text:
            found.update(url_credentials(text))
        found.update(v for v in self._extra() if isinstance(v, str))
        return sorted((v for v in found if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.values(text):
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text
