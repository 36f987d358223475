"""`%config OllieMagics.tracing`: tracing on and off from the notebook, in a real kernel;
without the otel extra one line says how to get it, and the trait stays off."""

from __future__ import annotations

import pytest

from tests.support.agents import kernel_env
from tests.support.kernel_harness import Kernel


@pytest.fixture
def kernel(tmp_path):
    env = kernel_env(tmp_path)
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://127.0.0.1:9/v1/traces"  # nothing there
    k = Kernel(str(tmp_path), env)
    assert k.run("%load_ext ollie_nb").error is None
    yield k
    k.shutdown()


def state(kernel) -> str:
    code = (
        "from ollie_nb.core import tracing\n"
        "print(get_ipython().find_magic('ollie').__self__.tracing, tracing().enabled)"
    )
    return kernel.run(code).text().strip()


def test_the_trait_turns_tracing_on_and_off(kernel):
    assert state(kernel) == "False False"
    assert kernel.run("%config OllieMagics.tracing = True").text() == ""
    assert state(kernel) == "True True"
    assert kernel.run("%config OllieMagics.tracing = False").text() == ""
    assert state(kernel) == "False False"


def test_without_the_extra_the_trait_is_one_line_and_stays_off(kernel):
    kernel.run("import sys; sys.modules['opentelemetry.sdk.trace'] = None  # as if not installed")
    run = kernel.run("%config OllieMagics.tracing = True")
    lines = run.text().strip().splitlines()
    assert len(lines) == 1, run.text()
    assert (
        "OllieMagics.tracing: tracing needs OpenTelemetry: pip install 'ollie-nb[otel]'" in lines[0]
    )
    assert state(kernel) == "False False"
