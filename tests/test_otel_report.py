"""``--report otel:PATH`` and ``otel:URL``: the run as OpenTelemetry spans.

Each run is a real ``zeroclaw`` subprocess. The file is read back with
OpenTelemetry's own protobuf types (a strict parse of the JSON mapping); what is
sent to a URL is received by a real loopback HTTP server and parsed as the OTLP
protobuf it must be. The attributes are checked exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from .bridged_helpers import configure, write_suite
from .cli_process import assert_clean_errors
from .conftest import echo_case, zeroclaw
from .otel_helpers import Tree, attributes, read_otlp_json, spans_of

CONTENT = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}


def scripted_suite(directory: Path) -> Path:
    """Two cases: ``echo`` passes (a tool call, then text, with a model and usage),
    ``wrong`` fails one of its two checks."""
    echo = echo_case(model_name="echo")
    steps = echo["turns"][0]["steps"]
    steps[0]["response"].update(input_tokens=12, output_tokens=7, model="m-1")
    steps[1]["response"].update(input_tokens=30, output_tokens=4, model="m-1")
    wrong = echo_case(model_name="wrong")
    wrong["expects"] = {"response_contains": ["hello", "absent"]}
    return write_suite(directory, echo, wrong)


def run_file(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> Tree:
    suite = scripted_suite(tmp_path / "suite")
    report = tmp_path / "out" / "run.otlp.jsonl"
    done = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", "--report", f"otel:{report}", *extra,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # one case fails
    (request,) = read_otlp_json(report)  # one export request, one line
    return Tree.of(list(spans_of(request)))


def test_the_file_holds_the_run_each_case_and_each_model_request_with_exact_attributes(
    tmp_path: Path,
) -> None:
    tree = run_file(tmp_path)
    run, cases = tree.run, tree.cases
    assert run.name == "zeroclaw eval run" and run.kind == Span.SPAN_KIND_INTERNAL
    run_attributes = attributes(run)
    assert len(run_attributes.pop("zeroclaw_eval.config_digest")) == 16
    assert run_attributes == {
        "test.suite.name": "suite",
        "test.suite.run.status": "failure",
        "zeroclaw_eval.mode": "replay",
        "zeroclaw_eval.gating": True,
        "zeroclaw_eval.cases": 2,
        "zeroclaw_eval.passed": 1,
        "zeroclaw_eval.failed": 1,
        "zeroclaw_eval.repeats": 1,
        "zeroclaw_eval.exit_code": 1,
        "zeroclaw_eval.agent": "reference",
    }
    assert run.status.code == Status.STATUS_CODE_ERROR
    assert run.status.message == "1 of 2 cases failed"
    assert sorted(cases) == ["echo", "wrong"]
    assert {span.trace_id for span in (run, *cases.values())} == {run.trace_id}

    echo, wrong = cases["echo"], cases["wrong"]
    assert echo.name == "case echo" and echo.status.code == Status.STATUS_CODE_OK
    assert attributes(echo) == {
        "test.case.name": "echo",
        "test.case.result.status": "pass",
        "zeroclaw_eval.case.source": "suite/case0.json",
        "zeroclaw_eval.case.attempt": 1,
        "zeroclaw_eval.case.attempts": 1,
        "zeroclaw_eval.case.ran": True,
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.usage.output_tokens": 11,
    }
    assert attributes(wrong)["test.case.result.status"] == "fail"
    assert (wrong.status.code, wrong.status.message) == (
        Status.STATUS_CODE_ERROR,
        "1 of 2 checks failed",
    )
    # Each check is an evaluation result on its case's span, at the attempt's end.
    events = [(event.name, attributes(event)) for event in wrong.events]
    assert events == [
        (
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.name": "response_contains",
                "gen_ai.evaluation.score.value": 1.0,
                "gen_ai.evaluation.score.label": "pass",
                "gen_ai.evaluation.explanation": "found",
                "zeroclaw_eval.check": 'response_contains: "hello"',
            },
        ),
        (
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.name": "response_contains",
                "gen_ai.evaluation.score.value": 0.0,
                "gen_ai.evaluation.score.label": "fail",
                "gen_ai.evaluation.explanation": 'not found: the final response is "The echo '
                'said: hello"',
                "zeroclaw_eval.check": 'response_contains: "absent"',
            },
        ),
    ]
    assert [len(echo.events), {e.time_unix_nano for e in echo.events}] == [
        3,
        {echo.end_time_unix_nano},
    ]

    # One client span per model request, in the attempt's time, with the GenAI attributes.
    first, second = tree.requests["echo"]
    assert [first.name, second.name] == ["chat m-1", "chat m-1"]
    assert {first.kind, second.kind} == {Span.SPAN_KIND_CLIENT}
    assert attributes(first) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "zeroclaw_eval.replay",
        "zeroclaw_eval.api": "in-process",
        "gen_ai.response.model": "m-1",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.response.finish_reasons": ["tool_calls"],
    }
    assert attributes(second)["gen_ai.response.finish_reasons"] == ["stop"]
    assert first.events == second.events == []  # the content is opt-in
    times = [
        run.start_time_unix_nano,
        echo.start_time_unix_nano,
        first.start_time_unix_nano,
        first.end_time_unix_nano,
        second.start_time_unix_nano,
        second.end_time_unix_nano,
        echo.end_time_unix_nano,
        run.end_time_unix_nano,
    ]
    assert times == sorted(times) and times[0] > 1_700_000_000 * 10**9  # epoch nanoseconds


def test_the_content_is_opt_in_in_the_conventions_shapes(tmp_path: Path) -> None:
    tree = run_file(tmp_path, env=CONTENT)
    second = tree.requests["echo"][1]
    (event,) = second.events
    assert event.name == "gen_ai.client.inference.operation.details"
    assert event.time_unix_nano == second.end_time_unix_nano
    details = attributes(event)
    assert "gen_ai.system_instructions" not in details  # the reference loop sends none
    assert details["gen_ai.input.messages"] == [
        {"role": "user", "parts": [{"type": "text", "content": "Echo hello"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "c1", "name": "echo", "arguments": {"message": "hello"}}
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": "hello"}],
        },
    ]
    assert details["gen_ai.output.messages"] == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "The echo said: hello"}],
            "finish_reason": "stop",
        }
    ]
    (echo_tool,) = details["gen_ai.tool.definitions"]
    assert echo_tool["type"] == "function" and echo_tool["name"] == "echo"
    assert echo_tool["parameters"]["type"] == "object"
    assert details["gen_ai.operation.name"] == "chat"


class Receiver:
    """A real OTLP/HTTP endpoint on loopback: keeps each POST (path, headers, body) and
    answers ``status``, after answering the first posts as ``first`` says (a status
    and a ``Retry-After``, or ``None`` for none)."""

    def __init__(
        self,
        status: int = 200,
        answer: bytes = b"",
        first: Sequence[tuple[int, str | None]] = (),
    ) -> None:
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append((self.path, dict(self.headers.items()), body))
                made = len(receiver.posts) - 1
                code, wait = first[made] if made < len(first) else (status, None)
                self.send_response(code)
                if wait is not None:
                    self.send_header("Retry-After", wait)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"


@contextmanager
def receiving(
    status: int = 200, answer: bytes = b"", first: Sequence[tuple[int, str | None]] = ()
) -> Iterator[Receiver]:
    receiver = Receiver(status, answer, first)
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()


def test_an_endpoint_receives_the_same_spans_as_otlp_protobuf_with_its_headers(
    tmp_path: Path,
) -> None:
    suite = scripted_suite(tmp_path / "suite")
    token = "tok-3f9a1c77e2"
    env = {"OTEL_EXPORTER_OTLP_TRACES_HEADERS": f"Authorization=Bearer%20{token},x-project=ci"}
    with receiving() as receiver:
        done = zeroclaw(
            "eval", "run", "--suite", suite, "--no-history", "--format", "json",
            "--report", f"otel:{receiver.url}", cwd=tmp_path, env=env,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    ((path, sent, body),) = receiver.posts
    headers = {name.lower(): value for name, value in sent.items()}
    assert path == "/v1/traces"
    assert headers["content-type"] == "application/x-protobuf"
    assert headers["authorization"] == f"Bearer {token}" and headers["x-project"] == "ci"
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    tree = Tree.of(list(spans_of(request)))
    assert sorted(tree.cases) == ["echo", "wrong"]
    assert [attributes(tree.cases[name])["test.case.result.status"] for name in ("echo", "wrong")]
    assert len(tree.requests["echo"]) == 2
    assert attributes(tree.requests["echo"][0])["gen_ai.usage.input_tokens"] == 12
    # The headers are the endpoint's: no report, no output quotes them.
    assert token not in done.stdout + done.stderr
    assert all(token not in file.read_text("utf-8", "replace") for file in _files(tmp_path))


def _files(directory: Path) -> list[Path]:
    return [path for path in directory.rglob("*") if path.is_file()]


def test_an_endpoint_that_refuses_the_spans_fails_the_run_with_one_line(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", echo_case())
    with receiving(status=415, answer=b"Unsupported content type") as receiver:
        done = zeroclaw(
            "eval", "run", "--suite", suite, "--no-history", "--report", f"otel:{receiver.url}",
            cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 1  # the only case passed: the report's failure is the red
    (line,) = assert_clean_errors(done.stderr)
    assert line == (
        f"Error: otel:{receiver.url}: the endpoint answered 415 Unsupported Media Type: "
        "Unsupported content type"
    )
    assert len(receiver.posts) == 1  # a refusal is not retried


def sent_to_one_that_answers(
    tmp_path: Path, first: list[tuple[int, str | None]]
) -> tuple[subprocess.CompletedProcess[str], Receiver]:
    """A passing suite run with its spans sent to an endpoint that answers the first
    posts as ``first`` says, then 200."""
    suite = write_suite(tmp_path / "suite", echo_case())
    with receiving(first=first) as receiver:
        done = zeroclaw(
            "eval", "run", "--suite", suite, "--no-history", "--report", f"otel:{receiver.url}",
            cwd=tmp_path,
        )  # fmt: skip
    return done, receiver


@pytest.mark.parametrize(
    ("first", "posts"),
    [([(503, "0")], 2), ([(429, None), (502, "0.1"), (504, "0")], 4)],
    ids=["503-retry-after", "429-backoff-then-more"],
)
def test_an_endpoint_that_asks_for_a_retry_gets_the_same_spans_again(
    tmp_path: Path, first: list[tuple[int, str | None]], posts: int
) -> None:
    done, receiver = sent_to_one_that_answers(tmp_path, first)
    assert (done.returncode, done.stderr) == (0, "")
    assert len(receiver.posts) == posts
    assert len({body for _, _, body in receiver.posts}) == 1  # the same export each time


@pytest.mark.parametrize(
    ("first", "posts", "said"),
    [
        ([(503, "0")] * 4, 4, "503 Service Unavailable (4 attempts)"),
        (
            [(429, "60")],
            1,
            "429 Too Many Requests (asked to wait 60 s, more than the 5 s waited)",
        ),
    ],
    ids=["gives-up-after-four", "will-not-wait-a-minute"],
)
def test_an_endpoint_that_keeps_asking_fails_the_run_saying_how(
    tmp_path: Path, first: list[tuple[int, str | None]], posts: int, said: str
) -> None:
    done, receiver = sent_to_one_that_answers(tmp_path, first)
    assert done.returncode == 1
    (line,) = assert_clean_errors(done.stderr)
    assert line == f"Error: otel:{receiver.url}: the endpoint answered {said}"
    assert len(receiver.posts) == posts


def test_an_endpoint_that_is_not_there_fails_the_run_with_one_line(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", echo_case())
    with receiving() as receiver:
        url = receiver.url  # its port, free again once it is closed
    done = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", "--report", f"otel:{url}", cwd=tmp_path
    )  # fmt: skip
    assert done.returncode == 1
    (line,) = assert_clean_errors(done.stderr)
    assert line.startswith(f"Error: otel:{url}: could not send the spans: ")


@pytest.mark.parametrize(
    ("target", "env", "message"),
    [
        (
            "otel:http://user:secret@127.0.0.1:4318/v1/traces",
            {},
            "the URL holds credentials, which would be written wherever the target is shown",
        ),
        ("otel:http:///v1/traces", {}, "the URL names no host"),
        ("otel:http://127.0.0.1:99999/v1/traces", {}, "not a valid URL: Port out of range"),
        ("otel:http://127.0.0.1:4318/v1/traces#x", {}, "the URL has a fragment"),
        ("json:http://127.0.0.1:4318/v1/traces", {}, "format 'json' writes files"),
        (
            "otel:out.jsonl",
            {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "yes"},
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT='yes': expected true or false",
        ),
        (
            "otel:http://127.0.0.1:4318/v1/traces",
            {"OTEL_EXPORTER_OTLP_HEADERS": "a=1,Authorization"},
            "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value",
        ),
    ],
)
def test_a_bad_target_or_setting_is_one_line_before_any_case_runs(
    tmp_path: Path, target: str, env: dict[str, str], message: str
) -> None:
    suite = write_suite(tmp_path / "suite", echo_case())
    done = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", "--format", "json", "--report", target,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode != 0 and done.stdout == ""  # no case ran, no report
    assert "Traceback" not in done.stderr
    line = done.stderr.splitlines()[-1]  # a usage error says so above it, as click does
    assert line.startswith("Error: ")
    assert message in line and target in line, line
    assert "secret" not in line.replace(target, "") and not (tmp_path / "out.jsonl").exists()


def test_a_url_in_the_configuration_is_kept_as_it_is(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", echo_case())
    with receiving() as receiver:
        (tmp_path / "zeroclaw.toml").write_text(
            f'[eval]\nreport = ["otel:{receiver.url}"]\n', encoding="utf-8"
        )
        done = zeroclaw("eval", "run", "--suite", suite, "--no-history", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(receiver.posts) == 1


TRACEPARENT_DUMP = """\
import os, runpy, sys
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(os.environ.get("TRACEPARENT", "-") + "\\n")
sys.argv = [sys.argv[2]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_command_agent_gets_its_case_spans_traceparent_only_when_traced(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    seen = tmp_path / "traceparents.txt"
    (tmp_path / "dump.py").write_text(TRACEPARENT_DUMP, encoding="utf-8")
    argv = [sys.executable, str(tmp_path / "dump.py"), str(seen), str(project / "echo_agent.py")]
    config = configure(project, f"command = {json.dumps(argv)}")
    suite = write_suite(tmp_path / "suite", echo_case(model_name="a"), echo_case(model_name="b"))
    report = tmp_path / "run.otlp.jsonl"
    plain = zeroclaw("eval", "run", "--config", config, "--suite", suite, "--no-history")
    assert plain.returncode == 0, plain.stderr
    assert seen.read_text(encoding="utf-8").split() == ["-", "-"]
    seen.unlink()
    traced = zeroclaw(
        "eval", "run", "--config", config, "--suite", suite, "--no-history",
        "--report", f"otel:{report}",
    )  # fmt: skip
    assert traced.returncode == 0, traced.stderr
    (request,) = read_otlp_json(report)
    tree = Tree.of(list(spans_of(request)))
    expected = {f"00-{span.trace_id.hex()}-{span.span_id.hex()}-01" for span in tree.cases.values()}
    assert set(seen.read_text(encoding="utf-8").split()) == expected and len(expected) == 2
    # The bridged agent's requests: the wire they came over and the model they named.
    first = attributes(tree.requests["a"][0])
    assert first["zeroclaw_eval.api"] == "chat.completions"
    assert first["gen_ai.request.model"] == "echo-agent"


TRACED_FACTORY = """\
from opentelemetry import trace

from echo_agent import EchoAgent

SEEN = []


def seen():
    context = trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}-{context.span_id:016x}"


class Traced(EchoAgent):
    def run_turn(self, user_input):
        SEEN.append(("turn", seen()))
        return super().run_turn(user_input)


def make_agent(**kwargs):
    SEEN.append(("made", seen()))
    return Traced(**kwargs)
"""


def test_a_factory_agent_runs_in_its_case_spans_context(tmp_path: Path) -> None:
    from zeroclaw_eval.testing import run_cli

    project = tmp_path / "project"
    config = configure(project, 'factory = "traced_factory:make_agent"')
    (project / "traced_factory.py").write_text(TRACED_FACTORY, encoding="utf-8")
    suite = write_suite(tmp_path / "suite", echo_case())
    report = tmp_path / "run.otlp.jsonl"
    args = ["eval", "run", "--config", str(config), "--suite", str(suite), "--no-history"]
    done = run_cli([*args, "--report", f"otel:{report}"])
    assert done.exit_code == 0, done.stderr
    traced = sys.modules.pop("traced_factory")
    (request,) = read_otlp_json(report)
    case = Tree.of(list(spans_of(request))).cases["echo-hello"]
    span = f"{case.trace_id.hex()}-{case.span_id.hex()}"
    made, turn = traced.SEEN
    assert made == ("made", span) and turn == ("turn", span)
    plain = run_cli(args)  # no otel report: no context
    assert plain.exit_code == 0, plain.stderr
    untraced = sys.modules.pop("traced_factory")
    none = f"{0:032x}-{0:016x}"  # OpenTelemetry's invalid span: no current one
    made, turn = untraced.SEEN
    assert made == ("made", none) and turn == ("turn", none)


INSTRUMENTED_FACTORY = """\
import json
import secrets
import urllib.request

from opentelemetry import trace

from echo_agent import EchoAgent

SENT = []


class Instrumented(EchoAgent):
    \"\"\"Its HTTP client says which span of its own made each request, as an
    instrumented one does: the trace it runs in, a new span id.\"\"\"

    def ask(self):
        context = trace.get_current_span().get_span_context()
        span = secrets.token_hex(8)
        SENT.append(span)
        body = {"model": "echo-agent", "messages": self.history, "tools": []}
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {self.api_key}",
                "Content-Type": "application/json",
                "traceparent": f"00-{context.trace_id:032x}-{span}-01",
            },
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)["choices"][0]["message"]


def make_agent(**kwargs):
    return Instrumented(**kwargs)
"""


def test_a_model_request_nests_under_the_agents_span_that_sent_it(tmp_path: Path) -> None:
    from zeroclaw_eval.testing import run_cli

    project = tmp_path / "project"
    config = configure(project, 'factory = "instrumented_factory:make_agent"')
    (project / "instrumented_factory.py").write_text(INSTRUMENTED_FACTORY, encoding="utf-8")
    case = echo_case()
    case["expects"] = {"response_contains": ["hello"]}
    suite = write_suite(tmp_path / "suite", case)
    report = tmp_path / "run.otlp.jsonl"
    done = run_cli(
        ["eval", "run", "--config", str(config), "--suite", str(suite), "--no-history",
         "--report", f"otel:{report}"]
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    sent = sys.modules.pop("instrumented_factory").SENT
    (request,) = read_otlp_json(report)
    spans = list(spans_of(request))
    requests = sorted(
        (span for span in spans if span.kind == Span.SPAN_KIND_CLIENT),
        key=lambda span: span.start_time_unix_nano,
    )
    (case_span,) = [span for span in spans if span.name == "case echo-hello"]
    assert len(sent) == len(requests) == 2
    # Each under the agent's span that made it, in the one trace: the agent's own
    # spans (exported by the agent) sit between the case and the model request.
    assert [span.parent_span_id.hex() for span in requests] == sent
    assert {span.trace_id for span in requests} == {case_span.trace_id}


@pytest.mark.parametrize(
    ("header", "span"),
    [
        (f"00-{'a' * 32}-{'b' * 16}-01", ("a" * 32, "b" * 16)),
        (f" 00-{'a' * 32}-{'b' * 16}-00 ", ("a" * 32, "b" * 16)),
        (None, None),
        ("", None),
        (f"01-{'a' * 32}-{'b' * 16}-01", None),  # a version this reader does not know
        (f"00-{'0' * 32}-{'b' * 16}-01", None),  # all-zero ids are invalid
        (f"00-{'a' * 32}-{'0' * 16}-01", None),
        (f"00-{'A' * 32}-{'b' * 16}-01", None),  # upper-case hex is invalid
        (f"00-{'a' * 31}-{'b' * 16}-01", None),
    ],
)
def test_only_a_valid_traceparent_names_a_parent(
    header: str | None, span: tuple[str, str] | None
) -> None:
    from zeroclaw_eval.report.trace import SpanContext

    found = SpanContext.of_traceparent(header)
    assert (None if found is None else (found.trace_id, found.span_id)) == span


GREEDY_FACTORY = """\
from echo_agent import EchoAgent


class Greedy(EchoAgent):
    \"\"\"Asks the model twice a turn, whatever it answered first.\"\"\"

    def run_turn(self, user_input):
        self.history.append({"role": "user", "content": user_input})
        first = self.ask()
        self.history.append({"role": "assistant", "content": first.get("content")})
        return self.ask().get("content") or ""


def make_agent(**kwargs):
    return Greedy(**kwargs)
"""


def test_a_model_request_the_script_cannot_answer_is_an_error_span(tmp_path: Path) -> None:
    from zeroclaw_eval.testing import run_cli

    project = tmp_path / "project"
    config = configure(project, 'factory = "greedy_factory:make_agent"')
    (project / "greedy_factory.py").write_text(GREEDY_FACTORY, encoding="utf-8")
    case = echo_case(model_name="greedy")
    case["turns"][0]["steps"] = [{"response": {"type": "text", "content": "hello"}}]
    case["expects"] = {"response_contains": ["hello"]}
    suite = write_suite(tmp_path / "suite", case)
    report = tmp_path / "run.otlp.jsonl"
    done = run_cli(
        ["eval", "run", "--config", str(config), "--suite", str(suite), "--no-history",
         "--report", f"otel:{report}"]
    )  # fmt: skip
    sys.modules.pop("greedy_factory")
    assert done.exit_code == 1
    (request,) = read_otlp_json(report)
    tree = Tree.of(list(spans_of(request)))
    answered, refused = tree.requests["greedy"]
    assert answered.status.code == Status.STATUS_CODE_UNSET
    assert attributes(answered)["gen_ai.response.finish_reasons"] == ["stop"]
    assert refused.status.code == Status.STATUS_CODE_ERROR
    assert attributes(refused) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "zeroclaw_eval.replay",
        "zeroclaw_eval.api": "chat.completions",
        "gen_ai.request.model": "echo-agent",
        "error.type": "RunError",
    }
    case_span = tree.cases["greedy"]
    assert case_span.status.code == Status.STATUS_CODE_ERROR
    assert case_span.status.message == attributes(case_span)["zeroclaw_eval.case.error"]
    assert case_span.events == []  # a run error grades nothing


def test_a_repeated_case_has_one_span_per_attempt(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", echo_case())
    report = tmp_path / "run.otlp.jsonl"
    done = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", "--repeat", "3",
        "--report", f"otel:{report}", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (request,) = read_otlp_json(report)
    spans = list(spans_of(request))
    (run,) = [span for span in spans if not span.parent_span_id]
    attempts = sorted(
        (span for span in spans if span.parent_span_id == run.span_id),
        key=lambda span: span.start_time_unix_nano,
    )
    numbers = [
        (
            attributes(span)["zeroclaw_eval.case.attempt"],
            attributes(span)["zeroclaw_eval.case.attempts"],
        )
        for span in attempts
    ]
    assert numbers == [(1, 3), (2, 3), (3, 3)]
    assert len({span.span_id for span in attempts}) == 3
    assert attributes(run)["zeroclaw_eval.repeats"] == 3
    # Each attempt's own two model requests, under it.
    for span in attempts:
        assert sum(1 for s in spans if s.parent_span_id == span.span_id) == 2


def test_a_refused_suite_is_a_run_span_holding_its_errors(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", echo_case(expects={}))
    report = tmp_path / "run.otlp.jsonl"
    done = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", "--report", f"otel:{report}",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    (request,) = read_otlp_json(report)
    (run,) = spans_of(request)
    errors = attributes(run)["zeroclaw_eval.errors"]
    assert errors[0].endswith("suite: 1 fixture refused (of 1); no case was run")
    assert (run.status.code, run.status.message) == (Status.STATUS_CODE_ERROR, errors[0])
    assert attributes(run)["test.suite.run.status"] == "failure"
    assert attributes(run)["zeroclaw_eval.cases"] == 0


@pytest.mark.parametrize("where", ["--report", "--format"])
def test_without_the_extra_the_report_is_one_line_naming_it(tmp_path: Path, where: str) -> None:
    # A package of that name first on the path, which will not import: as if not installed.
    blocked = tmp_path / "blocked" / "opentelemetry"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text(
        'raise ImportError("not installed", name="opentelemetry")\n', encoding="utf-8"
    )
    suite = write_suite(tmp_path / "suite", echo_case())
    target = f"otel:{tmp_path / 'run.otlp.jsonl'}" if where == "--report" else "otel"
    done = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", where, target, cwd=tmp_path,
        env={"PYTHONPATH": str(blocked.parent)},
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    (line,) = assert_clean_errors(done.stderr)
    assert line.endswith(
        "the otel report needs OpenTelemetry (opentelemetry is missing): "
        "pip install 'zeroclaw-eval[otel]'"
    ), line
