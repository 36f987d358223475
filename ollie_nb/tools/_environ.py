"""What a tool's subprocess may see of the kernel's environment, and which names count as secret.

`execute_code` runs model-written code: with the kernel's whole environment it could
read an API key and send it anywhere, and redacting its output would not help. So
subprocesses get the environment without secret-named variables, without variables
holding a known secret or a password inside a URL, unless the agent passes them by name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlsplit

SECRET_WORDS: tuple[str, ...] = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "CREDENTIALS",
    "PAT",
)
"""Words that make a variable name secret, alone (`GH_PAT`, `OPENAI_API_KEY_2`) or as a
word's ending (`APIKEY`, `DBPASSWORD`); `PAT` only alone, so `PATH` stays."""

_WORD = re.compile(r"[A-Za-z]+")
_SUFFIXES = tuple(w for w in SECRET_WORDS if w != "PAT")

# `scheme://user:password@host` or `scheme://token@host` inside free text.
_URL_WITH_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/@'\"<>]+@[^\s'\"<>]*")
# A URL with a query: `postgresql://app@db/x?password=...`, `https://h/p?access_token=...`.
_URL_WITH_QUERY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>?]*\?[^\s'\"<>]+")
# A user name alone (no password) is a credential when it is this long: `https://<token>@host`.
_TOKEN_USER_CHARS = 20


def is_secret_name(name: str) -> bool:
    """True when an environment variable's name says it holds a secret (see SECRET_WORDS)."""
    for word in _WORD.findall(name.upper()):
        if word in SECRET_WORDS or word.endswith(_SUFFIXES):
            return True
    return False


def url_credentials(text: str) -> list[str]:
    """The credentials written inside URLs in `text`: passwords, token-like user names, and
    query parameters with secret names.

    `postgresql://app:s3cret@db/x` gives `["s3cret"]`; `https://ghp_...@github.com` gives
    the token; `postgresql://app@db/x?password=s3cret` and `...?access_token=...` give the
    value; `ssh://git@host` gives nothing (a plain user name is not a secret).
    """
    found: list[str] = []
    for match in _URL_WITH_QUERY.finditer(text):
        query = match.group(0).split("?", 1)[1].split("#", 1)[0]
        found.extend(v for k, v in parse_qsl(query) if v and is_secret_name(k))
    for match in _URL_WITH_USERINFO.finditer(text):
        try:
            parts = urlsplit(match.group(0))
            password, user = parts.password, parts.username
        except ValueError:
            continue
        if password:
            found.append(password)
        elif user and len(user) >= _TOKEN_USER_CHARS:
            found.append(user)
    return list(dict.fromkeys(found))


def subprocess_env(
    base: Mapping[str, str] | None = None,
    *,
    secrets: Iterable[str | None] = (),
    passthrough: Iterable[str] = (),
) -> dict[str, str]:
    """`base` (default os.environ) without secret-named variables, variables holding one of
    `secrets`, or a credential inside a URL; names in `passthrough` are kept regardless."""
    base = os.environ if base is None else base
    keep = set(passthrough)
    values = [s for s in secrets if s]
    env: dict[str, str] = {}
    for name, value in base.items():
        if name not in keep and (
            is_secret_name(name) or any(s in value for s in values) or url_credentials(value)
        ):
            continue
        env[name] = value
    return env
