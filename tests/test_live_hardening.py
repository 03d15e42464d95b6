"""Live mode against replies real servers send and the scripted server never did.

Each test runs the installed ``zeroclaw`` script against a loopback
:class:`~tests.chat_server.ChatServer` playing one shape: a stalled server
dripping a byte a second, retries, ``content: null`` beside calls, missing and
reused call ids, ``finish_reason: length``, extra fields, no usage, the model a
server reports back, and generation settings.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import EvalConfig
from zeroclaw_eval.builtin.live_client import LiveProvider
from zeroclaw_eval.config import LiveConfig
from zeroclaw_eval.modes.notes import collecting

from .chat_server import TLS_CERTIFICATE, ChatServer, Reply, shaped, text, tool_calls, unused_port
from .live_helpers import live_case, write_config, zeroclaw

GREETING = live_case(["Say hi"], {"response_contains": ["hi"]}, name="live-greeting")
ECHO = live_case(
    ["Echo hello"],
    {"exact_tool_calls": 1, "tool_results_contain": [{"tool": "echo", "needle": "hello"}]},
    name="live-echo",
)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as running:
        yield running


@pytest.fixture
def suite(tmp_path: Path) -> Callable[..., Path]:
    directory = tmp_path / "suite"

    def write(*cases: Any) -> Path:
        directory.mkdir(exist_ok=True)
        for index, case in enumerate(cases):
            (directory / f"{index:02d}.json").write_text(json.dumps(case), encoding="utf-8")
        return directory

    return write


def run_live(tmp_path: Path, *extra: str) -> Any:
    return zeroclaw("eval", "run", "--mode", "live", "--suite", "suite", *extra, cwd=tmp_path)


def json_case(result: Any) -> dict[str, Any]:
    [case] = json.loads(result.stdout)["cases"]
    return dict(case)


# --- deadlines ----------------------------------------------------------------------


def test_a_server_dripping_a_byte_a_second_is_cut_off_at_timeout_s(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, timeout_s=2.0)
    # Every read gets a byte within a second: only a whole-request deadline ends this
    # (the body is about 250 bytes: four minutes).
    server.add([Reply(text("hi").body, drip_s=1.0)])

    started = time.monotonic()
    result = run_live(tmp_path, "--format", "json")
    elapsed = time.monotonic() - started

    assert result.returncode == 1, result.stdout + result.stderr
    case = json_case(result)
    assert case["error"] == (
        f"case 'live-greeting': turn 0: POST {server.url}/chat/completions: "
        "no complete reply within timeout_s=2"
    )
    assert elapsed < 15, elapsed  # 2 s of deadline, the rest is process start-up
    assert len(server.requests) == 1  # a timeout is not retried


def test_the_deadline_counts_the_wait_for_headers_too(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, timeout_s=0.5)
    server.add([Reply(text("hi").body, delay_s=3.0)])

    result = run_live(tmp_path, "--format", "json")

    assert result.returncode == 1
    assert json_case(result)["error"].endswith("no complete reply within timeout_s=0.5")


def test_over_https_the_deadline_holds_and_a_good_reply_passes(
    tmp_path: Path, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    trust = {"SSL_CERT_FILE": str(TLS_CERTIFICATE)}
    with ChatServer(tls=True) as server:
        assert server.url.startswith("https://127.0.0.1:")
        server.add([text("hi"), Reply(text("hi").body, drip_s=1.0)])
        write_config(tmp_path, server.url, timeout_s=2.0)
        good = zeroclaw(
            "eval", "run", "--mode", "live", "--suite", "suite", cwd=tmp_path, env_extra=trust
        )
        started = time.monotonic()
        dripped = zeroclaw(
            "eval", "run", "--mode", "live", "--suite", "suite", cwd=tmp_path, env_extra=trust
        )
        elapsed = time.monotonic() - started

    assert good.returncode == 0, good.stdout + good.stderr
    assert dripped.returncode == 1
    assert "no complete reply within timeout_s=2" in dripped.stdout
    assert elapsed < 15, elapsed


# --- retries: one budget per case, reported -------------------------------------------


def test_retries_share_the_case_budget_and_are_reported(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(ECHO)
    write_config(tmp_path, server.url, max_retries=2, retry_backoff_s=0.0)
    server.add(
        [
            Reply({"error": "busy"}, 503),
            Reply({"error": "slow down"}, 429, {"Retry-After": "0"}),
            tool_calls(("c1", "echo", {"message": "hello"})),
            Reply({"error": "busy"}, 503),  # the budget is spent: no third retry
            text("never asked for"),
        ]
    )

    result = run_live(tmp_path, "--format", "json")

    assert result.returncode == 1
    case = json_case(result)
    assert case["error"] == (
        f"case 'live-echo': turn 0: POST {server.url}/chat/completions: HTTP 503 (the case's "
        'max_retries=2 retries are used up): {"error": "busy"}'
    )
    assert case["retries"] == [
        {"reason": "HTTP 503", "attempt": 1, "waited_s": 0.0},
        {"reason": "HTTP 429, Retry-After 0", "attempt": 2, "waited_s": 0.0},
    ]
    assert len(server.requests) == 4


def test_retries_of_a_passing_case_show_in_the_text_report(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, retry_backoff_s=0.01)
    server.add([Reply({"error": "busy"}, 502), text("hi")])

    result = run_live(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "    retried 1x: HTTP 502 (attempt 1, waited 0.01 s)\n" in result.stdout


def test_no_retry_waits_past_the_case_deadline(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, eval_case_timeout_s=5.0)
    server.add([Reply({"error": "later"}, 429, {"Retry-After": "30"}), text("hi")])

    started = time.monotonic()
    result = run_live(tmp_path, "--format", "json")

    assert time.monotonic() - started < 15
    assert result.returncode == 1
    assert json_case(result)["error"].endswith(
        'HTTP 429: not retried: waiting 30 s would pass the case\'s deadline: {"error": "later"}'
    )
    assert len(server.requests) == 1


# --- reply shapes of real servers -----------------------------------------------------


@pytest.mark.parametrize(
    ("replies", "message"),
    [
        (
            [shaped(text("hi th"), finish_reason="length")],
            "turn 0: the reply was cut off at the token limit (finish_reason 'length')",
        ),
        (
            [shaped(text(""), finish_reason="content_filter")],
            "turn 0: the server's content filter withheld the reply",
        ),
        (
            [tool_calls(("same", "echo", {"message": "a"}), ("same", "echo", {"message": "b"}))],
            "turn 0: choices[0].message.tool_calls[1].id='same': the same id as tool_calls[0]",
        ),
        (
            [tool_calls(("c1", "echo", "{not json"))],
            "turn 0: choices[0].message.tool_calls[0]: the model called 'echo' with arguments "
            "that are not valid JSON",
        ),
    ],
    ids=["finish-length", "finish-content-filter", "reused-ids", "non-json-arguments"],
)
def test_a_reply_that_is_not_a_whole_answer_is_a_run_error_naming_the_case(
    tmp_path: Path,
    server: ChatServer,
    suite: Callable[..., Path],
    replies: list[Reply],
    message: str,
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url)
    server.add(replies)

    result = run_live(tmp_path)

    assert result.returncode == 1
    assert f"✗ live-greeting (suite/00.json): error: case 'live-greeting': {message}" in (
        result.stdout
    )
    assert "Traceback" not in result.stdout + result.stderr
    assert len(server.requests) == 1  # nothing dispatched, nothing asked again


def test_a_reply_cut_off_at_max_tokens_says_the_limit(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, max_tokens=16)
    server.add([shaped(text("hi, let me tell you a very long"), finish_reason="length")])

    result = run_live(tmp_path, "--format", "json")

    assert result.returncode == 1
    assert json_case(result)["error"] == (
        "case 'live-greeting': turn 0: the reply was cut off at the token limit "
        "(finish_reason 'length') (max_tokens=16)"
    )
    assert server.requests[0].body["max_tokens"] == 16


def test_documented_shapes_are_accepted(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    """content null beside calls, ids missing, unknown fields, no usage, finish_reason
    tool_calls / eos / none: each as the API documents, and the case passes."""
    suite(ECHO)
    write_config(tmp_path, server.url)
    server.add(
        [
            shaped(
                tool_calls(("x", "echo", {"message": "hello"})),
                drop_message=("tool_call_ids",),
                drop=("usage", "id", "object"),
                finish_reason="tool_calls",
                system_fingerprint="fp_1",
                timings={"predicted_ms": 12.5},
                message={"reasoning_content": "the user wants an echo"},
            ),
            shaped(text("done: hello"), finish_reason="eos", drop=("model",)),
        ]
    )

    result = run_live(tmp_path, "--format", "json")

    assert result.returncode == 0, result.stdout + result.stderr
    second = server.requests[1].body["messages"]
    assert second[1]["content"] is None
    assert second[1]["tool_calls"][0]["id"] == "generated_call_1"
    assert second[2] == {"role": "tool", "tool_call_id": "generated_call_1", "content": "hello"}
    assert "reasoning_content" not in second[1]  # an unknown field is not sent back


def test_the_model_the_server_reports_is_in_the_reports(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url)  # asks for example-model
    served = "/models/tiny-q4_k_m.gguf"
    server.add([shaped(text("hi"), model=served), shaped(text("hi"), model=served)])

    as_text = run_live(tmp_path)
    as_json = run_live(tmp_path, "--format", "json")

    assert as_text.returncode == 0, as_text.stdout + as_text.stderr
    assert f"✓ live-greeting (suite/00.json): 1/1 checks\n    model: {served}\n" in (as_text.stdout)
    assert json_case(as_json)["models"] == [served]
    assert server.requests[0].body["model"] == "example-model"


# --- generation settings --------------------------------------------------------------


def test_generation_settings_are_sent_only_when_set(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    server.add([text("hi"), text("hi")])
    write_config(tmp_path, server.url)
    plain = run_live(tmp_path)
    write_config(tmp_path, server.url, max_tokens=64, seed=7, stop=["</s>", "\n\n"])
    with (tmp_path / "zeroclaw.toml").open("a", encoding="utf-8") as config:
        config.write("\n[eval.live.extra_body]\ntop_k = 40\ncache_prompt = true\n")
    tuned = run_live(tmp_path)

    assert plain.returncode == 0 and tuned.returncode == 0, tuned.stdout + tuned.stderr
    assert set(server.requests[0].body) == {"model", "messages", "temperature", "tools"}
    body = server.requests[1].body
    assert body["max_tokens"] == 64
    assert body["seed"] == 7
    assert body["stop"] == ["</s>", "\n\n"]
    assert body["top_k"] == 40 and body["cache_prompt"] is True


def test_generation_settings_are_part_of_the_runs_provenance() -> None:
    base = EvalConfig(live=LiveConfig(base_url="http://127.0.0.1:1/v1", model="m"))
    digests = {base.digest()}
    for change in ({"max_tokens": 64}, {"seed": 7}, {"stop": ["x"]}, {"extra_body": {"k": 1}}):
        live = base.live.model_copy(update=change)
        digests.add(base.model_copy(update={"live": live}).digest())
    assert len(digests) == 5


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("messages", "eval.live.extra_body.messages: the harness sets this request field itself"),
        (
            "max_tokens",
            "eval.live.extra_body.max_tokens: the harness sets this request field itself "
            "(use eval.live.max_tokens)",
        ),
        ("stream", "eval.live.extra_body.stream: the harness sets this request field itself"),
    ],
)
def test_extra_body_may_not_set_what_the_harness_sends(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path], key: str, message: str
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url)
    with (tmp_path / "zeroclaw.toml").open("a", encoding="utf-8") as config:
        config.write(f"\n[eval.live.extra_body]\n{key} = 1\n")

    result = run_live(tmp_path)

    assert result.returncode == 1
    assert result.stderr == f"Error: {message}\n"
    assert server.requests == []


# --- a run that measured nothing is not green -----------------------------------------


def test_an_endpoint_that_is_down_fails_a_non_gating_run(
    tmp_path: Path, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, f"http://127.0.0.1:{unused_port()}/v1", eval_gating=False)

    result = run_live(tmp_path)

    assert result.returncode == 1
    assert "cannot connect" in result.stdout
    assert result.stdout.endswith(
        "not gating: failures are reported but do not change the exit code\n"
        "but 1 of 1 case hit a run error and measured nothing: exit 1\n"
    )


def test_a_failed_check_still_does_not_fail_a_non_gating_run(
    tmp_path: Path, server: ChatServer, suite: Callable[..., Path]
) -> None:
    suite(GREETING)
    write_config(tmp_path, server.url, eval_gating=False)
    server.add([text("bye")])

    result = run_live(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "0/1 cases passed" in result.stdout


def test_a_provider_called_from_another_thread_notes_to_its_own_case(
    server: ChatServer,
) -> None:
    """A model bridge answers on its server's thread: the notes still reach the case."""
    config = LiveConfig(base_url=server.url, model="example-model", retry_backoff_s=0.0)
    server.add([Reply({"error": "busy"}, 503), shaped(text("hi"), model="served-model")])
    with collecting() as notes:
        provider = LiveProvider(config)
    replies = []
    bridge = threading.Thread(
        target=lambda: replies.append(provider.respond([{"role": "user", "content": "x"}], []))
    )
    bridge.start()
    bridge.join(30)

    assert replies and replies[0].content == "hi"
    assert notes.models == ["served-model"]
    assert [retry.reason for retry in notes.retries] == ["HTTP 503"]
