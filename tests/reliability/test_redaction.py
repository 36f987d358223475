"""The one redaction call: nested and overlapping secrets leave nothing readable, and short
passwords of secret-named variables are hidden in python_* output and approvals (issue 37)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ollie_nb.core import AgentConfig, ToolCalled, ToolFinished
from ollie_nb.core._secrets import Redactor
from ollie_nb.llm import OfflineBackend, ToolCall
from ollie_nb.redaction import MASK, redact
from ollie_nb.tools import PythonServer
from ollie_nb.tools._pyvars import HIDDEN

SHORT, LONG = "sk-abc123", "sk-abc123-EXTENDED-PART"


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLIE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OLLIE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("OLLIE_ENV_FILE", str(tmp_path / "config" / "env"))


def test_a_secret_inside_a_longer_one_leaves_no_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment knows a key and a longer token holding it: neither part shows."""
    monkeypatch.setenv("SHORT_API_KEY", SHORT)
    monkeypatch.setenv("LONG_SERVICE_TOKEN", f"x{LONG}")
    text = f"a x{LONG} b {SHORT} c"
    assert Redactor()(text) == "a *** b *** c"
    assert redact(text, [SHORT, f"x{LONG}"]) == "a *** b *** c"


def test_overlapping_secrets_become_one_mask() -> None:
    assert redact("<abcdefghijkl>", ["abcdefgh", "efghijkl"]) == "<***>"
    assert redact("abcd1234wxyz", ["abcd1234", "1234wxyz", "d12"]) == MASK


@pytest.mark.parametrize("password", ["hunt", "hunt3r", "hunter2"])
def test_short_values_of_secret_names_are_hidden(password: str) -> None:
    assert redact(f"db_password = '{password}'") == "db_password = '***'"
    assert redact(f"{{'api_key': '{password}'}}") == "{'api_key': '***'}"
    assert redact("key=None token=true") == "key=None token=true"  # settings, not secrets


@pytest.mark.parametrize("scheme", ["Bearer", "Basic", "token"])
def test_an_authorization_header_hides_its_scheme_and_credential(scheme: str) -> None:
    """34: AUTHORIZATION is a secret name; the credential after its scheme's word is hidden."""
    assert redact(f"-H 'Authorization: {scheme} ab12cd34ef'") == "-H 'Authorization: ***'"
    assert redact(f"HTTP_AUTHORIZATION={scheme} ab12cd34ef") == "HTTP_AUTHORIZATION=***"
    hint = f'{{"Authorization": "{scheme} ${{TOKEN}}"}}'  # a variable's name, not its value
    assert redact(hint) == hint


def test_short_env_passwords_are_known_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHORT_DB_PASSWORD", "hunt3r")
    monkeypatch.setenv("SHORT_FLAG_TOKEN", "true")
    assert Redactor()("it is hunt3r, true") == "it is ***, true"


def test_what_the_model_reads_keeps_code_as_written_less_known_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool's result is source the model may edit: only known secrets are masked there."""
    monkeypatch.setenv("SHORT_DB_PASSWORD", "hunt3r")
    source = "password = 'changeme'  # db: hunt3r"
    assert Redactor().known_only(source) == "password = 'changeme'  # db: ***"
    assert Redactor()(source) == "password = '***'  # db: ***"


class Bench:
    """A Workbench over a plain dict (the kernel's namespace without a kernel)."""

    def __init__(self, ns: dict) -> None:
        self.ns = ns

    def namespace(self) -> dict:
        return self.ns

    def rich(self, value: object) -> bool:
        return False

    def propose(self, code: str) -> None:
        return None

    def last_error(self) -> None:
        return None


@pytest.mark.anyio
async def test_python_output_and_approvals_hide_short_passwords(
    make_core, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python_exec prints a 6-character password of the environment and one of the
    namespace; its approval shows code that assigns a 5-character one."""
    monkeypatch.setenv("SHORT_DB_PASSWORD", "hunt3r")
    python = PythonServer(Bench({"conn": {"password": "s3cr7"}}))
    python.override = True
    code = "import os; conn['user'] = 'me'; token = 'tk9x1'\nprint(os.environ['SHORT_DB_PASSWORD'], conn)"
    calls = [ToolCall("p", "python_exec", json.dumps({"code": code}))]
    asked: list[dict] = []
    core = await make_core(
        OfflineBackend(turns=[calls, "done"]),
        agent=AgentConfig.from_dict({}),
        extra_servers={"python": python},
        approve=lambda name, args: asked.append(args) or True,
        autosave=True,
    )
    events: list = []
    await core.submit("go", events.append)
    (called,) = [e for e in events if isinstance(e, ToolCalled)]
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    for shown in (json.dumps(asked), json.dumps(called.args), finished.result):
        assert not {"hunt3r", "s3cr7", "tk9x1"} & set(shown.replace("'", " ").split()), shown
    assert finished.result == "*** {'password': '***', 'user': 'me'}"


GHP = "ghp_" + "Q7" * 18  # a GitHub token's format


@pytest.mark.parametrize(
    "code",
    [
        "print('x' * 90 + key)",  # printed across the output cap
        "'x' * 1990 + key",  # a value's repr across its cut
        "print(cfg); cfg",  # a secret-named key of a dict, printed and as the value
        "api_key",  # a secret-named variable as the value
        "cfg['token']",
    ],
)
@pytest.mark.anyio
async def test_python_exec_output_and_value_are_checked_as_python_vars_is(code: str) -> None:
    """34: python_exec's output and value get python_vars' check, before their cut: key
    formats and secret-named values hidden, a secret-named expression shown as hidden."""
    ns = {"key": GHP, "api_key": "plain words", "cfg": {"token": "tk9x1", "user": "me"}}
    python = PythonServer(Bench(ns), output_cap=100)
    python.override = True
    exec_text = (await python.call_tool("python_exec", {"code": code})).text
    vars_text = (await python.call_tool("python_vars", {})).text
    for shown in (exec_text, vars_text):
        assert not [v for v in ("ghp_Q7", "plain words", "tk9x1") if v in shown], shown
    assert "'user': 'me'" in vars_text and ("api_key" not in code or HIDDEN in exec_text)


_PARTS = st.text(alphabet="abcXYZ0-", min_size=4, max_size=12)


@settings(max_examples=200, deadline=None)
@given(secrets=st.lists(_PARTS, min_size=1, max_size=4), filler=st.text("., \n", max_size=3))
def test_no_character_of_any_secret_survives(secrets: list[str], filler: str) -> None:
    """Secrets written side by side, nested and overlapping: each one, wherever it occurs
    in the text, is covered by a mask (no piece of it is left)."""
    nested = [s + t for s, t in itertools.pairwise(secrets)]  # each holds its neighbours
    known = [*secrets, *nested]
    text = filler.join([*nested, *secrets, "end"])
    out = redact(text, known)
    assert "end" in out
    for secret in known:
        assert secret not in out
    kept = out.replace(MASK, "\0")
    for piece in kept.split("\0"):  # what is left between masks is filler and "end" only
        assert set(piece) <= set(filler + "end"), (text, out)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab*-", max_size=30), known=st.lists(st.text("ab-", min_size=1)))
def test_redaction_is_stable_and_masks_every_occurrence(text: str, known: list[str]) -> None:
    """No occurrence is left, and none is formed across a mask: masking again changes nothing."""
    out = redact(text, known)
    assert redact(out, known) == out
    for secret in known:
        assert secret not in out
