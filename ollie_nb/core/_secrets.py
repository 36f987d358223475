"""Secret redaction: API keys and tokens never reach outputs, sessions, logs or warnings."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

REDACTED = "***"
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.I)
MIN_SECRET_CHARS = 8  # shorter values would redact ordinary words


class Redactor:
    """Replaces every known secret value in a text with ***, longest first.

    Longest first: when one secret contains another, replacing the shorter one first
    would leave the rest of the longer one in the text.
    """

    def __init__(self, extra: Callable[[], Iterable[str | None]] = tuple) -> None:
        self._extra = extra

    def values(self) -> list[str]:
        """The secret values known now: secret-named environment variables and `extra()`."""
        found = {v for k, v in os.environ.items() if SECRET_NAME.search(k) and v}
        found.update(v for v in self._extra() if isinstance(v, str))
        return sorted((v for v in found if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.values():
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text


def backend_secrets(backend: object) -> tuple[str, ...]:
    """The secrets a chat backend holds (its API key), through its public `secrets()`."""
    secrets = getattr(backend, "secrets", None)
    if not callable(secrets):
        return ()
    return tuple(s for s in secrets() if isinstance(s, str) and s)
