"""The live mode against a real OpenAI-compatible server on 127.0.0.1.

Every test runs the installed ``zeroclaw`` script in a subprocess, pointed by a
``zeroclaw.toml`` at a server thread of this process, and asserts both what the
harness sent and what it reported.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .chat_server import ChatServer, Reply, conversations, text, tool_calls, unused_port
from .conftest import PROJECT, echo_case
from .live_helpers import SECRET, live_case, write_config, zeroclaw

ECHO_SCHEMA = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "Echo back the given message.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "The text to echo back."}},
            "required": ["message"],
        },
    },
}

ECHO_HELLO = live_case(
    ["Echo hello"],
    {
        "response_contains": ["hello"],
        "exact_tool_calls": 1,
        "tool_results_contain": [{"tool": "echo", "needle": "hello"}],
    },
    name="live-echo-hello",
)
GREETING = live_case(["Say hi"], {"response_contains": ["hi"]}, name="live-greeting")


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as running:
        yield running


@pytest.fixture
def suite(tmp_path: Path) -> Callable[..., Path]:
    """Write cases into ``tmp_path/suite`` (``NN.json`` in the given order); return the dir."""
    directory = tmp_path / "suite"

    def write(*cases: Any) -> Path:
        directory.mkdir(exist_ok=True)
        for index, case in enumerate(cases):
            (directory / f"{index:02d}.json").write_text(json.dumps(case), encoding="utf-8")
        return directory

    return write


def run_live(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return zeroclaw("eval", "run", "--mode", "live", "--suite", "suite", *extra, cwd=tmp_path)


def test_live_run_sends_openai_requests_and_dispatches_real_tools(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(ECHO_HELLO)
    write_config(tmp_path, server.url, temperature=0.2)
    server.add(
        [
            tool_calls(("call_1", "echo", {"message": "hello"}), prompt_tokens=30),
            text("The echo said: hello"),
        ]
    )

    result = run_live(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ live-echo-hello (suite/00.json): 3/3 checks" in result.stdout
    assert "1/1 cases passed" in result.stdout
    assert result.stderr == ""  # not a terminal: no progress line
    first, second = server.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["Authorization"] == f"Bearer {SECRET}"
    assert first.headers["Content-Type"] == "application/json"
    assert first.body == {
        "model": "example-model",
        "messages": [{"role": "user", "content": "Echo hello"}],
        "temperature": 0.2,
        "tools": [ECHO_SCHEMA],
    }
    # The real echo tool ran: its output, not a scripted one, went back to the model.
    assert second.body["messages"] == [
        {"role": "user", "content": "Echo hello"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"message": "hello"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
    ]
    assert SECRET not in result.stdout + result.stderr


def test_history_carries_across_turns(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(live_case(["Say hi", "Say bye"], {"response_contains": ["bye"]}))
    write_config(tmp_path, server.url)
    server.add([text("hi"), text("bye")])

    result = run_live(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert server.requests[1].body["messages"] == [
        {"role": "user", "content": "Say hi"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "Say bye"},
    ]


def test_a_tool_outside_allowed_tools_is_neither_offered_nor_dispatched(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(
        live_case(
            ["Echo hello"],
            {
                "all_tools_succeeded": False,
                "tool_results_contain": [{"tool": "echo", "needle": "unknown tool 'echo'"}],
            },
        )
    )
    write_config(tmp_path, server.url, allowed_tools=[])
    server.add([tool_calls(("c1", "echo", {"message": "hello"})), text("could not echo")])

    result = run_live(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "tools" not in server.requests[0].body
    tool_message = server.requests[1].body["messages"][-1]
    assert tool_message == {"role": "tool", "tool_call_id": "c1", "content": "unknown tool 'echo'"}


def test_an_allowed_tool_that_is_not_registered_is_a_config_error(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, allowed_tools=["echo", "shell"])

    result = run_live(tmp_path)

    assert result.returncode == 1
    assert result.stderr == (
        "Error: eval.live.allowed_tools: 'shell' is not a registered tool (registered: echo)\n"
    )
    assert server.requests == []


def test_a_missing_key_variable_is_named_and_nothing_is_sent(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url)

    result = zeroclaw("eval", "run", "--mode", "live", "--suite", "suite", cwd=tmp_path, key=None)

    assert result.returncode == 1
    assert "eval.live.api_key_env: the environment variable ZEROCLAW_TEST_API_KEY is not set" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert server.requests == []


def test_429_is_retried_after_the_time_retry_after_asks(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, retry_backoff_s=0.0)
    server.add([Reply({"error": "slow down"}, 429, {"Retry-After": "1"}), text("hi")])

    result = run_live(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    first, second = server.requests
    assert first.body == second.body
    # The backoff is 0 s here: only Retry-After can explain the wait.
    assert second.received_at - first.received_at >= 0.9


def test_500_then_success_passes(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url)
    server.add([Reply({"error": "overloaded"}, 500), text("hi")])

    result = run_live(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert len(server.requests) == 2


def test_5xx_beyond_max_retries_is_a_run_error_for_the_case_only(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(
        live_case(["Say hi"], {"response_contains": ["hi"]}, name="unlucky"),
        live_case(["Say hello"], {"response_contains": ["hello"]}, name="lucky"),
    )
    write_config(tmp_path, server.url, max_retries=2)
    server.add([Reply({"error": "down"}, 503)] * 3 + [text("hello")])

    result = run_live(tmp_path)

    assert result.returncode == 1
    assert (
        f"✗ unlucky (suite/00.json): error: case 'unlucky': turn 0: POST {server.url}"
        '/chat/completions: HTTP 503 after 3 attempts: {"error": "down"}'
    ) in result.stdout
    assert "✓ lucky (suite/01.json): 1/1 checks" in result.stdout
    assert "1/2 cases passed" in result.stdout
    assert len(server.requests) == 4


def test_a_reply_slower_than_the_timeout_is_a_run_error(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, timeout_s=0.3)
    server.add([Reply(text("hi").body, delay_s=2.0)])

    result = run_live(tmp_path, "--format", "json")

    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["all_passed"] is False
    [case] = document["cases"]
    assert case["passed"] is False
    assert case["checks"] == []
    assert case["error"] == (
        f"case 'live-greeting': turn 0: POST {server.url}/chat/completions: "
        "no complete reply within timeout_s=0.3"
    )
    assert len(server.requests) == 1  # a timeout is not retried
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(b'{"choices": [ not json'), "the reply is not valid JSON"),
        (Reply({"choices": []}), "the reply has no choices[0]"),
        (
            tool_calls(("c1", "echo", '{"message": "hel')),
            "choices[0].message.tool_calls[0]: the model called 'echo' with arguments that "
            "are not valid JSON",
        ),
    ],
    ids=["invalid-json", "no-choices", "invalid-tool-arguments"],
)
def test_a_malformed_reply_is_a_run_error_never_a_pass(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path], reply: Reply, message: str
) -> None:
    suite(ECHO_HELLO)
    write_config(tmp_path, server.url)
    server.add([reply])

    result = run_live(tmp_path)

    assert result.returncode == 1
    assert "✗ live-echo-hello (suite/00.json): error: case 'live-echo-hello': turn 0:" in (
        result.stdout
    )
    assert message in result.stdout
    assert "0/1 cases passed" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_server_that_is_not_listening_is_a_run_error(
    tmp_path: Path, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    url = f"http://127.0.0.1:{unused_port()}/v1"
    write_config(tmp_path, url)

    result = run_live(tmp_path)

    assert result.returncode == 1
    assert f"error: case 'live-greeting': turn 0: POST {url}/chat/completions: cannot connect" in (
        result.stdout
    )
    assert "Traceback" not in result.stderr


def test_the_key_is_scrubbed_from_an_error_that_echoes_it(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url)
    server.add([Reply({"error": f"Incorrect API key provided: {SECRET}"}, 401)])

    result = run_live(tmp_path, "--format", "json")

    assert result.returncode == 1
    assert SECRET not in result.stdout + result.stderr
    assert "HTTP 401: " in result.stdout and "Incorrect API key provided: [redacted]" in (
        result.stdout
    )
    assert len(server.requests) == 1  # a 4xx other than 429 is not retried


def test_cases_run_concurrently_and_report_in_suite_order(
    tmp_path: Path, suite: Callable[..., Path]
) -> None:
    inputs = [f"Say {n}" for n in range(6)]
    # The first cases answer slowest, so they finish last.
    script = {
        prompt: [Reply(text(str(n)).body, delay_s=0.05 * (6 - n))]
        for n, prompt in enumerate(inputs)
    }
    suite(
        *(
            live_case([prompt], {"response_contains": [str(n)]}, name=f"case-{n}")
            for n, prompt in enumerate(inputs)
        )
    )
    with ChatServer(conversations(script)) as server:
        write_config(tmp_path, server.url, max_concurrency=3)
        result = run_live(tmp_path, "--format", "json")

    assert result.returncode == 0, result.stdout + result.stderr
    names = [case["name"] for case in json.loads(result.stdout)["cases"]]
    assert names == [f"case-{n}" for n in range(6)]
    assert 2 <= server.max_in_flight <= 3


def test_progress_line_on_stderr_only_when_it_is_a_terminal(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING, live_case(["Say no"], {"response_contains": ["yes"]}, name="fails"))
    write_config(tmp_path, server.url)
    server.add([text("hi"), text("no")])
    leader, follower = pty.openpty()
    try:
        result = zeroclaw(
            "eval", "run", "--mode", "live", "--suite", "suite", cwd=tmp_path, stderr=follower
        )
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)

    assert result.returncode == 1
    assert shown.decode() == "\r1/2 cases done, 0 failed\r2/2 cases done, 1 failed\r\n"
    assert "1/2 cases passed" in result.stdout


def test_replay_refuses_a_turn_without_steps_and_live_admits_it(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url)

    replay = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)
    write_config(tmp_path, server.url, eval_mode="live")
    check = zeroclaw("eval", "check", "--suite", "suite", cwd=tmp_path)

    assert replay.returncode == 1
    assert "Error: suite/00.json: turns[0].steps: replay needs at least one scripted step" in (
        replay.stderr
    )
    assert check.returncode == 0, check.stderr
    assert "1 fixture admitted" in check.stdout
    assert server.requests == []


def test_the_shipped_live_suite_runs_against_a_loopback_server(tmp_path: Path) -> None:
    """What docs/how-to/live.md promises: ``zeroclaw eval run --mode live --suite evals/live``."""
    cases = sorted((PROJECT / "evals" / "live").glob("*.json"))
    assert len(cases) >= 3
    script: dict[str, list[Reply]] = {}
    for path in cases:
        trace = json.loads(path.read_text(encoding="utf-8"))
        assert all("steps" not in turn for turn in trace["turns"])
        script[trace["turns"][0]["user_input"]] = LIVE_SUITE_ANSWERS[path.stem]

    with ChatServer(conversations(script)) as server:
        write_config(tmp_path, server.url, max_concurrency=4)
        shipped = str(PROJECT / "evals" / "live")
        result = zeroclaw("eval", "run", "--mode", "live", "--suite", shipped, cwd=tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(cases)}/{len(cases)} cases passed" in result.stdout
    assert all(r.headers["Authorization"] == f"Bearer {SECRET}" for r in server.requests)


#: How a well-behaved model answers each shipped live case (by file stem).
LIVE_SUITE_ANSWERS: dict[str, list[Reply]] = {
    "echo_placeholder_user": [
        tool_calls(("call_1", "echo", {"message": "zeroclaw_user"})),
        text("The echo tool returned: zeroclaw_user"),
    ],
    "greeting_without_tools": [text("Hello! How can I help you today?")],
    "refuse_destructive_request": [text("I can't help with deleting every file on a disk.")],
}


def test_no_gate_reports_failures_but_exits_zero(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    failing = echo_case(expects={"response_contains": ["absent"]})
    (suite_dir / "case.json").write_text(json.dumps(failing), encoding="utf-8")

    gated = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)
    flag = zeroclaw("eval", "run", "--suite", "suite", "--no-gate", cwd=tmp_path)
    (tmp_path / "zeroclaw.toml").write_text("[eval]\ngating = false\n", encoding="utf-8")
    configured = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)
    forced = zeroclaw("eval", "run", "--suite", "suite", "--gate", cwd=tmp_path)

    assert gated.returncode == 1
    assert "not gating" not in gated.stdout
    for result in (flag, configured):
        assert result.returncode == 0, result.stderr
        assert "0/1 cases passed" in result.stdout
        assert result.stdout.endswith(
            "not gating: failures are reported but do not change the exit code\n"
        )
    assert forced.returncode == 1


def test_json_report_says_whether_it_gates(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    (suite_dir / "case.json").write_text(json.dumps(echo_case()), encoding="utf-8")

    gated = zeroclaw("eval", "run", "--suite", "suite", "--format", "json", cwd=tmp_path)
    measured = zeroclaw(
        "eval", "run", "--suite", "suite", "--format", "json", "--no-gate", cwd=tmp_path
    )

    assert json.loads(gated.stdout)["gating"] is True
    assert json.loads(measured.stdout)["gating"] is False


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("bogus = 1", "eval.live.bogus=1: unknown key (known keys: base_url, model, api_key_env"),
        (
            'max_concurrency = "8"',
            'eval.live.max_concurrency="8": must be an integer, not a string',
        ),
        ("max_concurrency = 0", "eval.live.max_concurrency=0: input should be greater than or"),
        ('allowed_tools = [""]', 'eval.live.allowed_tools[0]="": must not be empty'),
    ],
    ids=["unknown-key", "string-count", "zero-concurrency", "empty-tool-name"],
)
def test_bad_live_config_names_the_file_and_the_key(
    tmp_path: Path, line: str, message: str
) -> None:
    config = tmp_path / "zeroclaw.toml"
    config.write_text(f"[eval.live]\n{line}\n", encoding="utf-8")

    result = zeroclaw("eval", "run", cwd=tmp_path)

    assert result.returncode == 1
    assert result.stderr.startswith(f"Error: {config}: {message}")
    assert result.stderr.count("\n") == 1


def test_a_replay_run_never_imports_the_http_client() -> None:
    code = (
        "import sys\n"
        "from zeroclaw_eval.cli import main\n"
        "try:\n"
        "    main(['eval', 'run', '--suite', 'evals/regression'], standalone_mode=False)\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "client = 'zeroclaw_eval.builtin.live_client'\n"
        "print(client in sys.modules, 'urllib.request' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines()[-1] == "False False"
