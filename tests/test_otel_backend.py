"""A run sent to a real tracing backend, and read back through that backend's API.

The backend is Arize Phoenix (``tests/otel_backend.txt`` pins it), an OTLP/HTTP
receiver with a REST API, installed in its own environment (``.otel-backend``,
beside the project's: it pins its own OpenTelemetry) by ``.ci/run``; ``PHOENIX``
names another install. Each test starts it on loopback in a fresh working
directory, runs ``zeroclaw eval run --report otel:http://...`` as a subprocess,
and asks Phoenix for the spans: the cases with their verdicts and evaluation
results, and the model requests with their GenAI attributes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .bridged_helpers import write_suite
from .conftest import PROJECT, echo_case, zeroclaw

PHOENIX = Path(os.environ.get("PHOENIX", PROJECT / ".otel-backend" / "bin" / "phoenix"))

#: The project the run's spans are filed under in Phoenix (a resource attribute).
PROJECT_NAME = "zeroclaw-ci"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Phoenix serving on loopback: its base URL. Fails under CI when not installed."""
    if not PHOENIX.is_file():
        message = f"Arize Phoenix is not installed at {PHOENIX} (.ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    port = _free_port()
    work = tmp_path_factory.mktemp("phoenix")
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (work / "phoenix.log").open("wb")
    process = subprocess.Popen(
        [str(PHOENIX), "serve"], env=env, stdout=log, stderr=log, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    tail = (work / "phoenix.log").read_text("utf-8", "replace")[-2000:]
                    pytest.fail(f"Phoenix did not start (exit {process.poll()}): {tail}")
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def spans(base: str, trace_id: str | None = None) -> list[dict[str, Any]]:
    """The project's spans, as Phoenix's REST API gives them (of one trace, when given)."""
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = "limit=1000" + (f"&cursor={cursor}" if cursor else "")
        url = f"{base}/v1/projects/{PROJECT_NAME}/spans?{query}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                page = json.load(response)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:  # the project is made when its first spans are stored
                return []
            raise
        found += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    return [s for s in found if trace_id is None or s["context"]["trace_id"] == trace_id]


def test_phoenix_shows_the_runs_cases_verdicts_evaluations_and_requests(
    phoenix: str, tmp_path: Path
) -> None:
    passing = echo_case(model_name="passing")
    steps = passing["turns"][0]["steps"]
    steps[0]["response"].update(input_tokens=12, output_tokens=7, model="m-1")
    failing = echo_case(model_name="failing")
    failing["expects"] = {"response_contains": ["absent"]}
    suite = write_suite(tmp_path / "suite", passing, failing)
    env = {"OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT_NAME}"}
    done = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", "--format", "json",
        "--report", f"otel:{phoenix}/v1/traces", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # one case fails; the spans were accepted

    # Phoenix stores what it received a moment later: ask until the run is all there.
    deadline = time.monotonic() + 30
    while True:
        runs = [s for s in spans(phoenix) if s["name"] == "zeroclaw eval run"]
        trace = spans(phoenix, runs[0]["context"]["trace_id"]) if len(runs) == 1 else []
        if len(trace) == 1 + 2 + 4 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    by_name = {span["name"]: span for span in trace}
    run = by_name["zeroclaw eval run"]
    assert run["parent_id"] is None and run["status_code"] == "ERROR"
    assert run["attributes"]["test.suite.run.status"] == "failure"
    cases = {name.removeprefix("case "): by_name[name] for name in ("case passing", "case failing")}
    assert {case["parent_id"] for case in cases.values()} == {run["context"]["span_id"]}
    verdicts = {name: case["attributes"]["test.case.result.status"] for name, case in cases.items()}
    assert verdicts == {"passing": "pass", "failing": "fail"}
    assert cases["failing"]["status_code"] == "ERROR"
    (evaluation,) = cases["failing"]["events"]
    assert evaluation["name"] == "gen_ai.evaluation.result"
    assert evaluation["attributes"]["gen_ai.evaluation.name"] == "response_contains"
    assert evaluation["attributes"]["gen_ai.evaluation.score.label"] == "fail"
    assert evaluation["attributes"]["gen_ai.evaluation.score.value"] == 0.0
    labels = [e["attributes"]["gen_ai.evaluation.score.label"] for e in cases["passing"]["events"]]
    assert labels == ["pass", "pass", "pass"]
    requests = [
        span for span in trace if span["parent_id"] == cases["passing"]["context"]["span_id"]
    ]
    requests.sort(key=lambda span: span["start_time"])
    assert [span["name"] for span in requests] == ["chat m-1", "chat"]
    first = requests[0]["attributes"]
    assert first["gen_ai.operation.name"] == "chat" and first["gen_ai.response.model"] == "m-1"
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (12, 7)
    assert first["gen_ai.response.finish_reasons"] == ["tool_calls"]
