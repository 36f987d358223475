"""Secret-looking values: the formats API keys and tokens have, wherever they sit in a value.

The formats come from detect-secrets' regex plugins (AWS, GitHub, GitLab, JWT, OpenAI's
legacy keys, Slack, Stripe, ...), used through their `analyze_string` API, plus the
newer formats those plugins do not know yet (OpenAI `sk-proj-`, Anthropic `sk-ant-`,
GitHub `github_pat_`, Hugging Face `hf_`, whole PEM blocks) and URLs with credentials
or token/password parameters. Used to hide values the `python_*` tools show the model,
and to ask before a tool call sends one (core's TrustGate).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
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

from ollie_nb.tools._environ import is_secret_name, url_credentials

HIDDEN = "***"
MIN_CHARS = 8  # a shorter match is an ordinary word more often than a key
# Some detect-secrets patterns backtrack from every start inside a long run of key
# characters ("sk-" 30,000 times kept OpenAIDetector busy for 29 s). No key of theirs is
# that long, so they read the text with such runs blanked; the formats of our own (JWTs,
# PEM blocks) are written to read any text once.
MAX_RUN = 200  # the longest key of their formats is about 110 characters
_LONG_RUN = re.compile(r"[^\s'\"`,;(){}\[\]<>&?=/]{" + str(MAX_RUN + 1) + ",}")


class _NewerFormats(RegexBasedDetector):
    """Key formats newer than detect-secrets' plugins, and PEM blocks as a whole."""

    secret_type = "API key or private key"
    denylist = (
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


_DETECTORS: tuple[RegexBasedDetector, ...] = (
    _NewerFormats(),
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

# `'api_key': 'v'` (a dict's repr), `api_key='v'` (a dataclass's), `API_KEY = "v"` (source).
# A name starts where a word does and is at most 128 characters, taken whole (possessive):
# on a long run of letters a looser pattern backtracks from every position (40,000 x's
# took 34 s); this one reads each run once.
_ASSIGNED = re.compile(
    r"""(?P<head>(?P<q>['"]?)(?<![A-Za-z0-9_-])(?P<name>[A-Za-z_][A-Za-z0-9_-]{0,127}+)"""
    r"""(?P=q)\s*+(?::|=)\s*)"""
    r"""(?P<value>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[^\s,)}\]'"]+)"""
)


def find_secrets(text: str) -> list[str]:
    """The secret-looking substrings of `text` (key formats, URL credentials), longest first."""
    found: set[str] = set(_DETECTORS[0].analyze_string(text))
    runs_cut = _LONG_RUN.sub(" ", text)
    for detector in _DETECTORS[1:]:
        found.update(detector.analyze_string(runs_cut))
    if "://" in text:
        found.update(url_credentials(text))
    return sorted((s for s in found if len(s) >= MIN_CHARS), key=len, reverse=True)


def hide_secrets(text: str) -> str:
    """`text` with secret-looking values as ***: key formats, URL credentials, and values
    assigned to secret names (`api_key='...'`, `"password": "..."`)."""
    for secret in find_secrets(text):
        text = text.replace(secret, HIDDEN)
    return _ASSIGNED.sub(_hide_assigned, text)


def _hide_assigned(match: re.Match[str]) -> str:
    value = match.group("value")
    quote = value[0] if value[:1] in ("'", '"') else ""
    inner = value[1:-1] if quote else value
    if not is_secret_name(match.group("name")) or len(inner) < 4 or inner == HIDDEN:
        return match.group(0)
    return f"{match.group('head')}{quote}{HIDDEN}{quote}"


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


def masked(value: Any, known: tuple[str, ...] = ()) -> Any:
    """A copy of `value` with every secret-looking substring (and every `known` one) as ***."""
    if isinstance(value, str):
        for secret in sorted({*find_secrets(value), *(k for k in known if k)}, key=len)[::-1]:
            value = value.replace(secret, HIDDEN)
        return value
    if isinstance(value, dict):
        return {k: masked(v, known) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(v, known) for v in value]
    return value
