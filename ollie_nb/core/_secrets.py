"""Secret redaction: API keys and tokens never reach outputs, sessions, logs or warnings."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable

from ollie_nb.tools import is_secret_name, url_credentials

REDACTED = "***"
MIN_SECRET_CHARS = 8  # shorter values would redact ordinary words
ENVIRON_TTL = 1.0  # seconds a read of the environment's secrets is reused


@functools.lru_cache(maxsize=1024)
def _secret_name(name: str) -> bool:
    return is_secret_name(name)


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
        self._raw: dict[bytes, bytes] = {}
        self._read_at = -ENVIRON_TTL

    def refresh(self) -> None:
        """Read the environment's secrets now (AgentCore does at the start of every turn).

        Unchanged since the last read (compared as os.environ's raw bytes, without
        decoding every value), the environment is not scanned again.
        """
        raw = dict(getattr(os.environ, "_data", {}))
        if raw and raw == self._raw:
            self._read_at = time.monotonic()
            return
        self._raw = raw
        found = {v for k, v in os.environ.items() if v and _secret_name(k)}
        for value in os.environ.values():
            if "://" in value:
                found.update(url_credentials(value))
        self._from_environ, self._read_at = found, time.monotonic()

    def _environ_secrets(self) -> set[str]:
        """The environment's secrets, read again when older than ENVIRON_TTL seconds.

        Reading the environment costs more than redacting a tool result, and it rarely
        changes while a kernel runs; every turn starts with a fresh read.
        """
        if time.monotonic() - self._read_at > ENVIRON_TTL:
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
