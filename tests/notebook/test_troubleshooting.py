"""What a user sees when the model's URL is wrong, and what the troubleshooting page says."""

from __future__ import annotations

import re
import socket
from pathlib import Path

from tests.notebook.test_frontend import kernel_env
from tests.support.kernel_harness import Kernel

TROUBLESHOOTING = Path(__file__).resolve().parents[2] / "docs" / "TROUBLESHOOTING.md"
PASSWORD = "pw-" + "z" * 12


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_wrong_model_url_is_named_in_the_error_in_status_and_in_the_docs(tmp_path: Path) -> None:
    url = f"http://ollie:{PASSWORD}@127.0.0.1:{closed_port()}/v1"
    shown = url.replace(PASSWORD, "***")
    env = {**kernel_env(tmp_path), "OLLIE_BACKEND": "", "OLLIE_OPENAI_URL": url}
    kernel = Kernel(str(tmp_path), env)
    try:
        loaded = kernel.run("%load_ext ollie_nb\n%ollie backend")
        status = kernel.run("%ollie status")
        prompt = kernel.run("%%ollie\nhello")
    finally:
        kernel.shutdown()
    everything = loaded.text() + status.text() + prompt.text() + prompt.stderr()
    assert PASSWORD not in everything
    assert (
        "(because OLLIE_OPENAI_URL is set and OLLIE_BACKEND is not; "
        "set OLLIE_BACKEND to choose another)" in loaded.text() + loaded.stderr()
    )
    assert re.search(rf"^backend URL +{re.escape(shown)}$", status.text(), re.M), status.text()
    error = f"openai: cannot reach {shown}: All connection attempts failed"
    assert error in prompt.text() + prompt.stderr()
    # The troubleshooting page quotes that message and names the status row to look at.
    page = TROUBLESHOOTING.read_text()
    assert "cannot reach URL: All connection attempts failed" in page
    assert "`backend URL`" in page and "`%ollie status`" in page
