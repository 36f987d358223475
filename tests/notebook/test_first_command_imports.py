"""The first `%ollie` command of a fresh IPython loads the core, not what only some uses need."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.agents import kernel_env

# Loaded on the first use that needs them: a secret-looking text, a notebook tool's call, an
# HTTP date in a retry, a hand-written tool-call id, tracing turned on.
LATER = ("detect_secrets", "pydantic", "email", "importlib.metadata", "uuid")


def test_the_first_status_leaves_the_modules_of_later_uses_unloaded(tmp_path):
    code = (
        "%load_ext ollie_nb\n%ollie status\nimport sys\n"
        f"print(sorted(m for m in {LATER!r} if m in sys.modules))\n"
        "print('core' if 'ollie_nb.core' in sys.modules else 'no core')"
    )
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **kernel_env(tmp_path), "IPYTHONDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-2:] == ["[]", "core"], done.stdout[-2000:]
