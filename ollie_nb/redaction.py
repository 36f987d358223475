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

import binascii
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
"""What a hidden secret reads as, everywhere (events, traces, files, the model's context)."""

MIN_DETECTED_CHARS = 8  # a shorter format match is an ordinary word more often than a key
MIN_ASSIGNED_CHARS = 4  # a value assigned to a secret name: short passwords are passwords
# Values of secret names that are settings, not secrets: masking "true" wherever it is
# written would garble every output (`HF_HUB_DISABLE_IMPLICIT_TOKEN=true`, `key=None`).
SETTING_WORDS = frozenset({"true", "false", "none", "null", "auto"})
_REFERENCE = re.compile(
    r"(?:(?i:bearer|basic|token|digest)\s+)?\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)"
)

SECRET_WORDS: tuple[str, ...] = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "CREDENTIALS",
    "PAT",
    "HEADERS",
    "AUTHORIZATION",
    "COOKIE",
    "COOKIES",
)
"""Words that make a variable name secret, alone (`GH_PAT`, `OPENAI_API_KEY_2`,
`OTEL_EXPORTER_OTLP_HEADERS`: headers carry an `Authorization`) or as a word's ending
(`APIKEY`, `DBPASSWORD`); `PAT` only alone, so `PATH` stays."""

_WORD = re.compile(r"[A-Za-z]+")
_SUFFIXES = tuple(w for w in SECRET_WORDS if w != "PAT")

# A URL in free text: its scheme is read only from where a run of scheme characters starts
# (the look-behind), and each part is taken whole (possessive), so a text is read once.
# A scheme tried from every letter of a run, each read to the run's end, took 26 s on
# "see x:// " and 60,000 letters; user info ends at the next `/`, so the user infos
# tried after each `://` never overlap, and a URL with a query is taken to its end.
_SCHEME = r"(?<![A-Za-z0-9+.-])[0-9+.-]*+(?P<url>[A-Za-z][A-Za-z0-9+.-]*+://"
# `scheme://user:password@host` or `scheme://token@host`.
_URL_WITH_USERINFO = re.compile(_SCHEME + r"[^\s/@'\"<>]++@[^\s'\"<>]*+)")
# A URL and its query: `postgresql://app@db/x?password=...`, `https://h/p?access_token=...`.
_URL_WITH_QUERY = re.compile(_SCHEME + r"[^\s'\"<>?]*+)(?:\?(?P<query>[^\s'\"<>]*+))?")
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

# `'api_key': 'v'` (a dict's repr), `api_key='v'` (a dataclass's), `API_KEY = "v"` (source),
# `Authorization: Bearer v` (a header: the scheme's word and the credential after it).
# A name starts where a word does and is at most 128 characters, taken whole (possessive):
# on a long run of letters a looser pattern backtracks from every position (40,000 x's
# took 34 s); this one reads each run once.
_ASSIGNED = re.compile(
    r"""(?P<head>(?P<q>['"]?)(?<![A-Za-z0-9_-])(?P<name>[A-Za-z_][A-Za-z0-9_-]{0,127}+)"""
    r"""(?P=q)\s*+(?::|=)\s*)"""
    r"""(?P<value>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|"""
    r"""(?:(?i:bearer|basic|token|digest)\s++)?[^\s,)}\]'"]+)"""
)


# Invisible characters: controls other than tab and line ends, format characters (zero-width
# spaces and joiners, soft hyphen, direction marks and overrides, word joiner, BOM, tags),
# variation selectors, Hangul fillers: written inside a key, they hide it from a pattern.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff"
    "\uffa0\ufff0-\ufffb\U000e0000-\U000e0fff]"
)
# Long tokens whose decoded form is read too: a key sent base64- or hex-encoded is still sent.
MIN_ENCODED_CHARS = 16
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{" + str(MIN_ENCODED_CHARS) + r",}+=*+")
_HEX = re.compile(r"[0-9A-Fa-f]{" + str(MIN_ENCODED_CHARS) + ",}+")
_URLSAFE = str.maketrans("-_", "+/")


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
        query = (match.group("query") or "").split("#", 1)[0]
        found.extend(v for k, v in parse_qsl(query) if v and is_secret_name(k))
    for match in _URL_WITH_USERINFO.finditer(text):
        found.extend(_userinfo_secret(match.group("url")))
    return list(dict.fromkeys(found))


def _userinfo_secret(url: str) -> list[str]:
    """The password of a URL with user info, or its user name when that is token-long."""
    try:
        parts = urlsplit(url)
        password, user = parts.password, parts.username
    except ValueError:
        return []
    if password:
        return [password]
    return [user] if user and len(user) >= _TOKEN_USER_CHARS else []


def is_secret_value(value: str | None) -> bool:
    """Whether a secret name's value is worth hiding: 4 characters or more, not a setting
    word, not a reference to a variable holding it (`${TOKEN}`, `Bearer $TOKEN`)."""
    return (
        value is not None
        and len(value) >= MIN_ASSIGNED_CHARS
        and value.lower() not in SETTING_WORDS
        and not _REFERENCE.fullmatch(value)
    )


def find_secrets(text: str) -> list[str]:
    """The secret-looking substrings of `text` (key formats, URL credentials), longest first."""
    if len(text) < MIN_DETECTED_CHARS:  # nothing shorter is reported: the detectors can wait
        return []
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
    return _masked(text, _spans(text, known, detect))


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with each of `spans` as MASK, spans that overlap or touch as one."""
    spans = sorted(spans)
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


def visible(text: str) -> str:
    """`text` without invisible characters: a key written with zero-width spaces, soft
    hyphens, direction marks or control characters in it reads as the key."""
    return _INVISIBLE.sub("", text)


def secret_paths(value: Any, known: Sequence[str] = ()) -> list[str]:
    """Where in `value` (a tool call's arguments) a secret is: `config.key`, `items[2]`,
    `data.***` (a key); `known` adds secret values to look for (the kernel's own keys).

    Keys are read as values are, each without its invisible characters, and so are the
    decoded forms of long base64 and hex tokens; a secret split over several strings is
    found in them joined, and each string holding part of it is named."""
    return _ArgCheck(value, known, show=False).paths


def mask_args(value: Any, known: Sequence[str] = ()) -> Any:
    """`value` (a tool call's arguments) as an approver may see it: every part of a secret
    found by `secret_paths` as MASK (a string holding one loses its invisible characters);
    other strings as written, so the approval shows their invisible characters escaped."""
    return _ArgCheck(value, known, show=True).shown


def _strings(value: Any) -> Iterator[tuple[str, bool]]:
    """Every string of a JSON-like value, keys included (True), in order."""
    if isinstance(value, str):
        yield value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key, True
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


class _ArgCheck:
    """One look at a call's arguments: the paths holding a secret and (`show`) the masked copy."""

    def __init__(self, value: Any, known: Sequence[str], *, show: bool) -> None:
        self.known, self.show = tuple(known), show
        originals = list(_strings(value))
        strings = [(visible(text), is_key) for text, is_key in originals]
        texts = [text for text, _ in strings]
        spans = [_secret_spans(text, self.known) for text in texts]
        for group in (True, False):  # the keys joined, the values joined
            index = [i for i, (_, is_key) in enumerate(strings) if is_key is group]
            joined = _joined_spans([texts[i] for i in index], self.known)
            for i, found in zip(index, joined):
                spans[i] += found
        self.leaves = iter(zip([text for text, _ in originals], texts, spans))
        self.paths: list[str] = []
        self.shown = self._walk(value, "")

    def _next(self) -> tuple[str, bool]:
        """The next string as shown, and whether it holds (part of) a secret."""
        original, text, spans = next(self.leaves)
        if self.show:
            spans = [*spans, *_spans(text, self.known, True)]
        if not spans:  # shown as written: an approver sees invisible characters, escaped
            return original, False
        return _masked(text, spans), True

    def _walk(self, value: Any, path: str) -> Any:
        if isinstance(value, str):
            shown, secret = self._next()
            if secret:
                self.paths.append(path or "(the value)")
            return shown
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                shown_key, secret = self._next() if isinstance(key, str) else (key, False)
                while shown_key in out:  # two keys masked alike stay two entries
                    shown_key = f"{shown_key}'"
                here = f"{path}.{shown_key}" if path else str(shown_key)
                if secret:
                    self.paths.append(here)
                out[shown_key] = self._walk(item, here)
            return out
        if isinstance(value, (list, tuple)):
            return [self._walk(item, f"{path}[{index}]") for index, item in enumerate(value)]
        return value


def _joined_spans(texts: list[str], known: tuple[str, ...]) -> list[list[tuple[int, int]]]:
    """For each of `texts`, the parts of it that belong to a secret found in all of them
    joined (a key split over two values), as spans of that text."""
    if len(texts) < 2:
        return [[] for _ in texts]
    spans = _found_spans("".join(texts), known)
    out: list[list[tuple[int, int]]] = []
    at = 0
    for text in texts:
        low, high = at, at + len(text)
        out.append(
            [(max(a, low) - low, min(b, high) - low) for a, b in spans if a < high and b > low]
        )
        at = high
    return out


def _secret_spans(text: str, known: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where key formats, URL credentials, `known` secrets, and long base64 or hex tokens
    whose decoded form holds one of those are in `text`."""
    return _found_spans(text, known) + _encoded_spans(text, known)


def _found_spans(text: str, known: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where key formats, URL credentials and `known` secrets are in `text`."""
    found = {s for s in known if s and s in text}
    found.update(find_secrets(text))
    return [(m.start(), m.end()) for s in found for m in re.finditer(re.escape(s), text)]


def _encoded_spans(text: str, known: tuple[str, ...]) -> list[tuple[int, int]]:
    """The base64 and hex tokens of `text` whose decoded forms hold a secret."""
    tokens = [m for pattern in (_BASE64, _HEX) for m in pattern.finditer(text)]
    if not tokens:
        return []
    decoded = [_decodings(m.group(0), hexadecimal=m.re is _HEX) for m in tokens]
    whole = "\n".join(decoded)
    found = [s for s in known if s and s in whole] + find_secrets(whole)
    return [m.span() for m, d in zip(tokens, decoded) if any(s in d for s in found)]


def _decodings(token: str, *, hexadecimal: bool) -> str:
    """A token decoded from each place a whole unit can start, as text, lines apart."""
    if hexadecimal:
        forms = [bytes.fromhex(token[k : len(token) - (len(token) - k) % 2]) for k in (0, 1)]
    else:
        token = token.rstrip("=").translate(_URLSAFE)
        forms = []
        for k in range(4):
            part = token[k : len(token) - int((len(token) - k) % 4 == 1)]  # 1 left: no byte
            forms.append(binascii.a2b_base64(part + "=" * (-len(part) % 4)))
    return "\n".join(f.decode("utf-8", "replace") for f in forms)
