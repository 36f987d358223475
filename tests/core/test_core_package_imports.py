"""`import ollie_nb.core` (or `.llm`) loads none of its modules; a name loads its module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LOADED = """\
import sys
import ollie_nb.core as core
def loaded():
    return sorted(m for m in sys.modules if m.startswith(("ollie_nb.core.", "ollie_nb.llm")))
print(loaded())
from ollie_nb.core import Caps
print(loaded(), Caps is sys.modules["ollie_nb.core._budget"].Caps)
print("AgentCore" in dir(core), "ollie_nb.core._core" in sys.modules)
"""


@pytest.mark.slow
def test_the_package_loads_a_module_when_one_of_its_names_is_first_used():
    done = subprocess.run(
        [sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    bare, caps, listed = done.stdout.splitlines()
    assert bare == "[]"
    assert "'ollie_nb.core._budget'" in caps and "'ollie_nb.core._core'" not in caps
    assert caps.endswith(" True")
    assert listed == "True False"


LLM_LOADED = """\
import sys
from ollie_nb.llm import ToolDef
print(sorted(m for m in sys.modules if m.startswith("ollie_nb.llm.")))
from ollie_nb.llm import OpenAIBackend
print("ollie_nb.llm._openai" in sys.modules, "ollie_nb.llm._anthropic" in sys.modules)
"""


@pytest.mark.slow
def test_the_llm_package_loads_a_provider_when_it_is_used():
    done = subprocess.run(
        [sys.executable, "-c", LLM_LOADED], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    first, provider = done.stdout.splitlines()
    assert first == "['ollie_nb.llm._types']"
    assert provider == "True False"
