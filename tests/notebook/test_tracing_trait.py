"""`%config OllieMagics.tracing`: tracing on and off from the notebook, in a real kernel;
without the otel extra one line says how to get it, and the trait stays off."""

from __future__ import annotations

import re

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


def test_an_endpoint_where_nothing_listens_is_said_once_and_status_shows_tracing(tmp_path):
    env = kernel_env(tmp_path)
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://127.0.0.1:9/v1/traces"  # nothing there
    env["OTEL_BSP_SCHEDULE_DELAY"] = "50"  # ms: the batch goes out at once
    env["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"] = "1"  # s: the SDK's retries end soon
    k = Kernel(str(tmp_path), env)
    try:
        outputs = [k.run("%load_ext ollie_nb"), k.run("%ollie status")]
        assert re.search(r"tracing +on: OTLP to http://127.0.0.1:9/v1/traces\n", outputs[-1].text())
        failing = "from ollie_nb.core import tracing; print(tracing().report.failing)"
        for _ in range(3):  # each turn's spans fail to export; the line comes once
            outputs.append(k.run("%ollie ask hello"))
            outputs.append(k.run("from ollie_nb.core import tracing; tracing().flush()"))
        assert k.run(failing).text().strip() == "True"
        outputs.append(k.run("%ollie status"))
        said = "\n".join(run.text() for run in outputs)  # stream text included
        assert (
            said.count(
                "ollie_nb: tracing could not export spans (OTLP to http://127.0.0.1:9/v1/traces)"
            )
            == 1
        ), said
        assert "Transient error" not in said and "Failed to export" not in said, said
        assert "the last export failed" in outputs[-1].text()
    finally:
        k.shutdown()
