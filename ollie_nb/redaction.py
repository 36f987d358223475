"""The one redaction call: known secrets and secret-looking values in a text, shown as MASK.

Importable from every layer and by the task server (it imports nothing of ollie_nb), so
the mask and the rule that masks are written once. `redact(text, known)` hides every
occurrence of each `known` secret (the caller's: the environment's keys, a database
URL's password) and everything that looks like one: key formats (detect-secrets' regex
plugins plus newer formats they do not know: OpenAI `sk-proj-`, Anthropic `sk-ant-`,
GitHub `github_pat_`, Hugging Face `hf_`, whole PEM blocks), credentials inside URLs,
and values assigned to secret names (`api_key='...'`, `"password": "..."`).

All matches are found in the original text first and masked as merged spans: when one
secret contains or overlaps another, no part of either is left readable.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
"""What a hidden secret reads as, everywhere (events, traces, files, the model's context)."""

MIN_DETECTED_CHARS = 8  # a shorter format match is an ordinary word more often than a key
MIN_ASSIGNED_CHARS = 4  # a value assigned to a secret name: short passwords are passwords
# Values of secret names that are settings, not secrets: masking "true" wherever it is
# written would garble every output (`HF_HUB_DISABLE_IMPLICIT_TOKEN=true`, `key=None`).
SETTING_WORDS = frozenset({"true", "false", "none", "null", "auto"})

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

# Some detect-secrets patterns backtrack from every start inside a long run of key
# characters ("sk-" 30,000 times kept OpenAIDetector busy for 29 s). No key of theirs is
# that long, so they read the text with such runs blanked; the formats of our own (JWTs,
# PEM blocks) are written to read any text once.
MAX_RUN = 200  # the longest key of their formats is about 110 characters
_LONG_RUN = re.compile(r"[^\s'\"`,;(){}\[\]<>&?=/]{" + str(MAX_RUN + 1) + ",}")

_NEWER_FORMATS = (
    re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}"),
    re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
    re.compile(r"github_pat_[A-Za-z0-9_]{22,}"),
    re.compile(r"gh[opusr]_[A-Za-z0-9]{20,}"),
    re.compile(r"hf_[A-Za-z0-9]{20,}"),
    re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(  # a JWT, signed or not, from where a word starts, each part taken whole
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"
    ),
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
)

# `'api_key': 'v'` (a dict's repr), `api_key='v'` (a dataclass's), `API_KEY = "v"` (source).
# A name starts where a word does and is at most 128 characters, taken whole (possessive):
# on a long run of letters a looser pattern backtracks from every position (40,000 x's
# took 34 s); this one reads each run once.
_ASSIGNED = re.compile(
    r"""(?P<head>(?P<q>['"]?)(?<![A-Za-z0-9_-])(?P<name>[A-Za-z_][A-Za-z0-9_-]{0,127}+)"""
    r"""(?P=q)\s*+(?::|=)\s*)"""
    r"""(?P<value>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[^\s,)}\]'"]+)"""
)


class _Detector(Protocol):
    def analyze_string(self, string: str) -> Iterable[str]: ...


@functools.cache
def _detectors() -> tuple[_Detector, ...]:
    """detect-secrets' regex plugins, loaded on the first look (the task server, which only
    masks its database password, starts without them)."""
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector

    return (
        AWSKeyDetector(),
        GitHubTokenDetector(),
        GitLabTokenDetector(),
        JwtTokenDetector(),
        OpenAIDetector(),
        SlackDetector(),
        StripeDetector(),
        SendGridDetector(),
        PypiTokenDetector(),
        DiscordBotTokenDetector(),
        MailchimpDetector(),
        SquareOAuthDetector(),
    )


def is_secret_name(name: str) -> bool:
    """True when a variable's name says it holds a secret (see SECRET_WORDS)."""
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


def is_secret_value(value: str | None) -> bool:
    """Whether a secret name's value is worth hiding: 4 characters or more, not a setting word."""
    return (
        value is not None
        and len(value) >= MIN_ASSIGNED_CHARS
        and value.lower() not in SETTING_WORDS
    )


def find_secrets(text: str) -> list[str]:
    """The secret-looking substrings of `text` (key formats, URL credentials), longest first."""
    found = {m.group(0) for pattern in _NEWER_FORMATS for m in pattern.finditer(text)}
    runs_cut = _LONG_RUN.sub(" ", text)
    for detector in _detectors():
        found.update(detector.analyze_string(runs_cut))
    if "://" in text:
        found.update(url_credentials(text))
    return sorted((s for s in found if len(s) >= MIN_DETECTED_CHARS), key=len, reverse=True)


def redact(text: str, known: Iterable[str | None] = (), *, detect: bool = True) -> str:
    """`text` with every `known` secret and (unless not `detect`) every secret-looking value
    in it as MASK. Without `detect`: for text the model must read as written (a tool's
    result, the history as saved), less the secrets the caller knows."""
    spans = sorted(_spans(text, known, detect))
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, stop in spans:
        if merged and start <= merged[-1][1]:  # overlapping or touching: one span
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([start, stop])
    parts: list[str] = []
    at = 0
    for start, stop in merged:
        parts += [text[at:start], MASK]
        at = stop
    parts.append(text[at:])
    return "".join(parts)


def _spans(text: str, known: Iterable[str | None], detect: bool) -> Iterator[tuple[int, int]]:
    """Where the secrets are in `text`, as (start, end) pairs that may overlap."""
    found = {k for k in known if k and k in text}
    if detect:
        found.update(find_secrets(text))
    for secret in found:
        start = text.find(secret)
        while start >= 0:
            yield start, start + len(secret)
            start = text.find(secret, start + 1)
    if not detect:
        return
    for match in _ASSIGNED.finditer(text):
        value = match.group("value")
        quoted = value[:1] in ("'", '"')
        inner = value[1:-1] if quoted else value
        if is_secret_name(match.group("name")) and is_secret_value(inner):
            start = match.start("value") + int(quoted)
            yield start, start + len(inner)


def redact_data(data: Any, redact: Callable[[str], str]) -> Any:
    """`data` (JSON-like) with every string in it redacted, keys too, before it is encoded:
    a secret holding a quote, a backslash or non-ASCII is not escaped out of reach."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {redact_data(k, redact): redact_data(v, redact) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(v, redact) for v in data]
    return data


def secret_paths(value: Any, known: tuple[str, ...] = (), path: str = "") -> Iterator[str]:
    """Where in `value` (a tool call's arguments) a secret-looking string is: `config.key`,
    `items[2]`; `known` adds secret values to look for (the kernel's own keys)."""
    if isinstance(value, str):
        if find_secrets(value) or any(s in value for s in known):
            yield path or "(the value)"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from secret_paths(item, known, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from secret_paths(item, known, f"{path}[{index}]")
