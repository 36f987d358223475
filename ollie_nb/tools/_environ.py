"""What a tool's subprocess may see of the kernel's environment.

`execute_code` runs model-written code: with the kernel's whole environment it could
read an API key and send it anywhere, and redacting its output would not help. So
subprocesses get the environment without secret-named variables, without variables
holding a known secret or a password inside a URL, unless the agent passes them by name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from ollie_nb.redaction import is_secret_name, url_credentials

# A known secret this short inside another variable's value is more often a coincidence
# than a copy (a 4-character password inside PATH): only longer ones drop the variable.
MIN_COPIED_CHARS = 8


def subprocess_environ(
    base: Mapping[str, str] | None = None,
    *,
    secrets: Iterable[str | None] = (),
    passthrough: Iterable[str] = (),
) -> dict[str, str]:
    """`base` (default os.environ) without secret-named variables, variables holding one of
    `secrets`, or a credential inside a URL; names in `passthrough` are kept regardless."""
    base = os.environ if base is None else base
    keep = set(passthrough)
    values = [s for s in secrets if s and len(s) >= MIN_COPIED_CHARS]
    env: dict[str, str] = {}
    for name, value in base.items():
        if name not in keep and (
            is_secret_name(name) or any(s in value for s in values) or url_credentials(value)
        ):
            continue
        env[name] = value
    return env
