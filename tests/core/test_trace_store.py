"""Traces land in a real trace store: an MLflow tracking server, fed over OTLP/HTTP.

The test starts `mlflow server` on a SQLite file, sends a plan turn's spans to its
`/v1/traces` endpoint with the OTLP exporter ollie_nb uses, and reads them back with
MLflow's own client (`mlflow.search_traces`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ollie_nb.core import AgentCore, disable_tracing, enable_tracing
from ollie_nb.llm import OfflineBackend
from tests.conftest import read_db
from tests.support.absent import skip_or_fail
from tests.support.agents import tasks_agent

try:
    import mlflow
    from mlflow import MlflowClient
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
except ImportError:  # pragma: no cover - both are in the dev install
    skip_or_fail("mlflow or the otel extra is not installed", allow_module_level=True)

START_LIMIT = 240.0  # s: the server migrates its database first (tens of seconds when busy)
QUIET = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def mlflow_server(tmp_path: Path, monkeypatch):
    """`mlflow server` on a SQLite file; its URL once /health answers (bounded)."""
    for name, value in QUIET.items():
        monkeypatch.setenv(name, value)
    port = free_port()
    mlflow_exe = Path(sys.executable).with_name("mlflow")
    args = [str(mlflow_exe), "server", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--backend-store-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", "--workers", "1"]
    args += ["--default-artifact-root", str(tmp_path / "artifacts")]
    log = (tmp_path / "mlflow.log").open("w")
    proc = subprocess.Popen(
        args, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_LIMIT
        while True:
            if proc.poll() is not None:
                raise AssertionError(
                    f"mlflow server exited: {(tmp_path / 'mlflow.log').read_text()}"
                )
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"mlflow server not up within {START_LIMIT} s")
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and its uvicorn worker
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()


def traces_of(experiment: str, count: int) -> list:
    """The experiment's traces, read until `count` have arrived (bounded)."""
    deadline = time.monotonic() + 60
    while True:
        traces = mlflow.search_traces(locations=[experiment], return_type="list")
        if len(traces) >= count or time.monotonic() > deadline:
            return traces
        time.sleep(0.5)


@pytest.mark.timeout(480)
def test_a_plan_turn_and_its_steps_read_back_from_an_mlflow_server(tmp_path, mlflow_server):
    mlflow.set_tracking_uri(mlflow_server)
    experiment = MlflowClient(mlflow_server).create_experiment("ollie-nb-traces")
    exporter = OTLPSpanExporter(
        endpoint=f"{mlflow_server}/v1/traces", headers={"x-mlflow-experiment-id": experiment}
    )
    enable_tracing(exporter, batch=True)  # as OTLP goes out by default: batched, off the loop
    db = tmp_path / "tasks.db"
    core = AgentCore(OfflineBackend(), agent=tasks_agent(db), workdir=tmp_path, autosave=False)

    async def scenario():
        async with core:
            await core.submit("Ship it\n- Prepare\n- Check (after 1)")
            await core.runs.run_plan(parallel=2)
            return core.plans[-1]

    try:
        record = asyncio.run(scenario())
    finally:
        disable_tracing()  # exports what is left
    [trace_of_turn, trace_of_run] = sorted(
        traces_of(experiment, 2), key=lambda t: t.info.request_time
    )
    spans = {s.name: s for s in trace_of_turn.data.spans}
    turn, plan = spans["invoke_agent default"], spans["execute_tool reasoning_plan"]
    assert turn.parent_id is None and plan.parent_id == turn.span_id
    assert spans["chat offline-planner"].parent_id == turn.span_id
    assert plan.attributes["ollie.goal.id"] == record.goal_id
    assert plan.attributes["ollie.plan.steps"] == 2
    assert turn.attributes["gen_ai.provider.name"] == "offline"
    steps = [s for s in trace_of_run.data.spans if s.name.startswith("work_step")]
    [run] = [s for s in trace_of_run.data.spans if s.name.startswith("run_plan")]
    rows = read_db(db)
    assert sorted(s.attributes["ollie.task.id"] for s in steps) == sorted(record.ids)
    for step in steps:
        assert step.parent_id == run.span_id
        task = rows[step.attributes["ollie.task.id"]]
        assert task["parent"] == step.attributes["ollie.goal.id"] == record.goal_id
        assert task["status"] == step.attributes["ollie.step.status"] == "done"
