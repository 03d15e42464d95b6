"""A team's own MCP server behind the served tools: reached over stdio or streamable
HTTP, in whichever era it speaks, afresh for each case.

The servers are real: ``tests/mcp_servers/sdk_server.py`` is made with the official
``mcp`` SDK (dual-era; over HTTP it can be made to refuse the modern revision as a
``2025-11-25`` server does), ``tests/mcp_servers/weather_server.py`` speaks only the
``initialize`` handshake over stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval.toolserver.upstream import connect

from .bridged_helpers import run, write_suite
from .conftest import PROJECT

SERVERS = PROJECT / "tests" / "mcp_servers"
SDK_SERVER = SERVERS / "sdk_server.py"
WEATHER_SERVER = SERVERS / "weather_server.py"
MCP_TOOLS = PROJECT / "examples" / "agents" / "mcp_tools"


@contextmanager
def http_server(tmp_path: Path, *flags: str) -> Iterator[tuple[str, Path]]:
    """The SDK server over streamable HTTP on a loopback port: its URL and its request log."""
    log = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(SDK_SERVER), "http", "--log", str(log), *flags],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith(("http://127.0.0.1:", "https://127.0.0.1:")), url
        yield url, log
    finally:
        process.kill()
        process.wait()


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


MODERN = "2026-07-28"
LEGACY = "2025-11-25"


@pytest.mark.parametrize(
    ("flags", "modern", "replies_as"),
    [
        ((), True, "application/json"),
        (("--json",), True, "application/json"),
        (("--legacy-only",), False, "text/event-stream"),
        (("--legacy-only", "--json"), False, "application/json"),
    ],
    ids=["modern", "modern-json", "legacy-event-stream", "legacy-json"],
)
def test_over_http_the_client_speaks_the_era_the_server_speaks(
    tmp_path: Path, flags: tuple[str, ...], modern: bool, replies_as: str
) -> None:
    with http_server(tmp_path, *flags) as (url, log):
        upstream = connect(url, 10.0)
        try:
            upstream.start()
            schemas = {tool["name"]: tool["inputSchema"] for tool in upstream.tools}
            results = [
                upstream.call("forecast", {"city": "Oslo", "days": 2}),
                upstream.call("forecast", {"city": "Atlantis"}),
                upstream.call("protocol", {}),
            ]
        finally:
            upstream.close()
        requests = logged(log)
    assert upstream.modern is modern
    # A tool whose header annotation is invalid is left out in either era: the
    # harness serves it again over HTTP, where a modern client leaves it out.
    assert sorted(schemas) == ["count", "forecast", "protocol", "query"]
    assert list(upstream.left_out) == ["pay"]
    assert schemas["forecast"]["required"] == ["city"]
    assert [(result.output, result.success) for result in results] == [
        ("Oslo: snow for 2 day(s)", True),
        ("Error executing tool forecast: no forecast for Atlantis", False),
        (MODERN if modern else LEGACY, True),
    ]
    # Modern first: a server/discover with the modern headers.
    assert requests[0]["mcp_method"] == "server/discover"
    assert requests[0]["version"] == MODERN
    calls = [request for request in requests if request["http"] == "POST"][-3:]
    if modern:
        # Stateless: every request carries the version and its method; a call its tool.
        assert [(r["version"], r["session"]) for r in requests] == [(MODERN, None)] * 5
        assert [r["mcp_method"] for r in requests] == [
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call",
        ]
        assert [r["mcp_name"] for r in calls] == ["forecast", "forecast", "protocol"]
    else:
        # Refused (400, no modern error): the handshake, then its session on every
        # request, and the session deleted at the end.
        assert requests[0]["status"] == 400
        initialize, *later = requests[1:]
        assert (initialize["version"], initialize["session"]) == (None, None)
        session = later[0]["session"]
        assert session
        assert [(r["version"], r["session"]) for r in later[:-1]] == [(LEGACY, session)] * 5
        assert (later[-1]["http"], later[-1]["session"]) == ("DELETE", session)
    assert {r["type"] for r in calls} == {replies_as}


@pytest.mark.parametrize(
    ("argv", "modern", "tool"),
    [
        ([sys.executable, str(SDK_SERVER), "stdio"], True, "forecast"),
        ([sys.executable, str(WEATHER_SERVER)], False, "weather"),
    ],
    ids=["dual-era-sdk-server", "handshake-only-server"],
)
def test_over_stdio_the_client_probes_then_falls_back_to_the_handshake(
    argv: list[str], modern: bool, tool: str
) -> None:
    upstream = connect(argv, 10.0)
    try:
        upstream.start()
        result = upstream.call(tool, {"city": "Oslo"})
    finally:
        upstream.close()
    assert upstream.modern is modern
    assert result.success and result.output.startswith("Oslo: ")
    assert upstream.protocol_version == (MODERN if modern else LEGACY)


def test_over_stdio_a_probe_left_unanswered_falls_back_to_the_handshake() -> None:
    upstream = connect([sys.executable, str(WEATHER_SERVER), "--silent-on-unknown"], 1.0)
    try:
        upstream.start()  # the probe waits mcp_upstream_timeout_s (here 1 s), no longer
        result = upstream.call("weather", {"city": "Paris"})
    finally:
        upstream.close()
    assert upstream.modern is False
    assert (result.output, result.success) == ("Paris: 12 C, light rain", True)


def test_a_server_naming_a_handshake_version_it_speaks_gets_the_handshake() -> None:
    argv = [sys.executable, str(WEATHER_SERVER), "--unsupported", "2027-01-01,2025-11-25"]
    upstream = connect(argv, 10.0)
    try:
        upstream.start()
    finally:
        upstream.close()
    assert (upstream.modern, upstream.protocol_version) == (False, LEGACY)


def test_a_modern_server_sharing_no_version_fails_in_one_line_without_falling_back() -> None:
    from zeroclaw_eval.errors import RunError

    argv = [sys.executable, str(WEATHER_SERVER), "--unsupported", "2027-01-01"]
    upstream = connect(argv, 10.0)
    with pytest.raises(RunError) as raised:
        upstream.start()
    assert str(raised.value) == (
        f"the MCP server {upstream.shown} speaks only protocol versions 2027-01-01; this "
        "client speaks 2026-07-28 and 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"
    )


def test_a_modern_http_call_mirrors_annotated_arguments_into_headers(tmp_path: Path) -> None:
    with http_server(tmp_path) as (url, log):
        upstream = connect(url, 10.0)
        try:
            upstream.start()
            results = [
                upstream.call("query", {"region": "eu-north", "sql": "select 1"}),
                upstream.call("query", {"region": "Zürich", "sql": "select 2"}),
            ]
        finally:
            upstream.close()
        requests = logged(log)
    # The server checks each header against the body: a call without it is refused.
    assert [(result.output, result.success) for result in results] == [
        ("eu-north: select 1", True),
        ("Zürich: select 2", True),
    ]
    assert [request["region"] for request in requests[-2:]] == [
        "eu-north",
        "=?base64?WsO8cmljaA==?=",  # not plain ASCII: the specification's Base64 form
    ]
    assert list(upstream.left_out) == ["pay"]
    assert "x-mcp-header on a property that is not an integer" in upstream.left_out["pay"]


def test_an_https_url_is_spoken_to_over_tls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .chat_server import TLS_CERTIFICATE, TLS_KEY

    monkeypatch.setenv("SSL_CERT_FILE", str(TLS_CERTIFICATE))  # trust the test certificate
    with http_server(tmp_path, "--tls", str(TLS_CERTIFICATE), str(TLS_KEY)) as (url, _):
        assert url.startswith("https://")
        upstream = connect(url, 10.0)
        try:
            upstream.start()
            result = upstream.call("forecast", {"city": "Oslo"})
        finally:
            upstream.close()
    assert upstream.modern
    assert (result.output, result.success) == ("Oslo: snow for 1 day(s)", True)


def test_an_http_server_that_cannot_be_reached_fails_in_one_line() -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    from zeroclaw_eval.errors import RunError

    upstream = connect(f"http://127.0.0.1:{port}/mcp", 5.0)
    with pytest.raises(RunError) as raised:
        upstream.start()
    message = str(raised.value)
    assert message.startswith(
        f"the MCP server http://127.0.0.1:{port}/mcp could not be reached for server/discover: "
    )
    assert "\n" not in message


# --- through the CLI: record ---------------------------------------------------------------


def project(tmp_path: Path, chat_url: str, upstream: list[str] | str, extra: str = "") -> Path:
    """A served-agent project whose own MCP server is ``upstream``."""
    import shutil

    directory = tmp_path / "project"
    directory.mkdir()
    shutil.copy(MCP_TOOLS / "served_agent.py", directory)
    config = directory / "zeroclaw.toml"
    config.write_text(
        f'[eval.live]\nbase_url = "{chat_url}"\nmodel = "gpt-test"\nmax_concurrency = 1\n'
        '[eval.agent]\nfactory = "served_agent:make_agent"\ntools = "served"\n'
        f"mcp_upstream = {json.dumps(upstream)}\n{extra}",
        encoding="utf-8",
    )
    return config


def case(name: str, tool: str, needle: str) -> dict[str, Any]:
    return {
        "model_name": name,
        "turns": [{"user_input": f"Use {tool}."}],
        "expects": {"tool_results_contain": [{"tool": tool, "needle": needle}]},
    }


def record(config: Path, suite: Path, out: Path) -> Any:
    from zeroclaw_eval.testing import run_cli

    args = ["eval", "record", "--config", str(config), "--suite", str(suite), "--out", str(out)]
    return run_cli(args)


def test_record_through_a_servers_url_replays_green_without_it(tmp_path: Path) -> None:
    from .chat_server import ChatServer, text, tool_calls

    with ChatServer() as chat, http_server(tmp_path) as (url, log):
        chat.add(
            [
                tool_calls(("c1", "forecast", {"city": "Paris", "days": 3})),
                text("Rain in Paris."),
            ]
        )
        config = project(tmp_path, chat.url, url)
        suite = write_suite(tmp_path / "live", case("paris", "forecast", "rain"))
        out = tmp_path / "recorded"
        result = record(config, suite, out)
        assert result.exit_code == 0, result.stdout + result.stderr
        offered = {tool["function"]["name"]: tool for tool in chat.requests[0].body["tools"]}
        requests = logged(log)
    assert offered["forecast"]["function"]["parameters"]["required"] == ["city"]
    assert all(request["version"] == MODERN for request in requests)
    recorded = json.loads((out / "case0.json").read_text(encoding="utf-8"))
    assert recorded["tool_results"] == {"forecast": [{"result": "Paris: light rain for 3 day(s)"}]}
    # The server is gone: the replay does not need it.
    replayed = run(config, out)
    assert replayed.exit_code == 0, replayed.stdout


def test_each_case_gets_its_own_server_so_no_state_leaks_and_none_is_left_running(
    tmp_path: Path,
) -> None:
    from .chat_server import ChatServer, text, tool_calls

    pids = tmp_path / "pids"
    with ChatServer() as chat:
        for _ in range(2):
            chat.add([tool_calls(("c1", "count", {})), text("Counted.")])
        config = project(tmp_path, chat.url, [sys.executable, str(SDK_SERVER), "stdio", str(pids)])
        suite = write_suite(
            tmp_path / "live", case("first", "count", "1"), case("second", "count", "1")
        )
        out = tmp_path / "recorded"
        result = record(config, suite, out)
    assert result.exit_code == 0, result.stdout + result.stderr
    for name in ("case0.json", "case1.json"):
        recorded = json.loads((out / name).read_text(encoding="utf-8"))
        assert recorded["tool_results"] == {"count": [{"result": "1"}]}
    started = [int(pid) for pid in pids.read_text(encoding="utf-8").split()]
    assert len(set(started)) == 2
    for pid in started:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_each_case_opens_its_own_session_on_a_handshake_era_http_server(tmp_path: Path) -> None:
    from .chat_server import ChatServer, text, tool_calls

    with ChatServer() as chat, http_server(tmp_path, "--legacy-only") as (url, log):
        for _ in range(2):
            chat.add([tool_calls(("c1", "protocol", {})), text("Done.")])
        config = project(tmp_path, chat.url, url)
        suite = write_suite(
            tmp_path / "live", case("first", "protocol", LEGACY), case("second", "protocol", LEGACY)
        )
        result = record(config, suite, tmp_path / "recorded")
        assert result.exit_code == 0, result.stdout + result.stderr
        requests = logged(log)
    sessions = [request["session"] for request in requests if request["http"] == "DELETE"]
    assert len(sessions) == 2 and len(set(sessions)) == 2 and None not in sessions


def test_a_server_that_dies_fails_only_its_case_and_the_suite_goes_on(tmp_path: Path) -> None:
    from .chat_server import ChatServer, text, tool_calls

    with ChatServer() as chat:
        chat.add([tool_calls(("c1", "weather", {"city": "crash"})), text("Sorry.")])
        chat.add([tool_calls(("c1", "weather", {"city": "Oslo"})), text("Snow.")])
        config = project(tmp_path, chat.url, [sys.executable, str(WEATHER_SERVER)])
        suite = write_suite(
            tmp_path / "live", case("crashes", "weather", "x"), case("oslo", "weather", "snow")
        )
        out = tmp_path / "recorded"
        result = record(config, suite, out)
    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if "error:" in line]
    assert len(errors) == 1 and "exited with status 3" in errors[0], result.stdout
    assert not (out / "case0.json").exists()
    recorded = json.loads((out / "case1.json").read_text(encoding="utf-8"))
    assert recorded["tool_results"] == {"weather": [{"result": "Oslo: 3 C, snow"}]}


@pytest.mark.parametrize(
    ("setting", "error"),
    [
        (
            'mcp_upstream = "ftp://example.com/mcp"',
            'eval.agent.mcp_upstream="ftp://example.com/mcp": not an http:// or https:// URL',
        ),
        ("mcp_upstream = 7", "eval.agent.mcp_upstream=7: expected the server's argv"),
        (
            'mcp_upstream = ["python", "s.py"]\nmcp_upstream_timeout_s = 0',
            "eval.agent.mcp_upstream_timeout_s=0: input should be greater than 0",
        ),
    ],
    ids=["not-http", "not-argv-or-url", "timeout-not-positive"],
)
def test_a_bad_mcp_upstream_setting_is_one_line_naming_the_field(
    tmp_path: Path, setting: str, error: str
) -> None:
    from .conftest import zeroclaw

    config = tmp_path / "zeroclaw.toml"
    config.write_text(
        f'[eval.agent]\ncommand = ["true"]\ntools = "served"\n{setting}\n', encoding="utf-8"
    )
    result = zeroclaw("eval", "check", "--config", config)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(config) in lines[0] and error in lines[0], result.stderr


def test_a_recording_through_a_server_replays_with_its_tools_as_they_were_offered(
    tmp_path: Path,
) -> None:
    """Replayed, the agent offers the model the server's tools as the live run did
    (description and schema): the recording's requests do not drift."""
    from .chat_server import ChatServer, text, tool_calls

    with ChatServer() as chat:
        chat.add(
            [tool_calls(("c1", "forecast", {"city": "Oslo", "days": 2})), text("Snow in Oslo.")]
        )
        config = project(tmp_path, chat.url, [sys.executable, str(SDK_SERVER), "stdio"])
        suite = write_suite(tmp_path / "live", case("oslo", "forecast", "snow"))
        out = tmp_path / "recorded"
        result = record(config, suite, out)
        assert result.exit_code == 0, result.stdout + result.stderr
        live_tools = chat.requests[0].body["tools"]
    recorded = json.loads((out / "case0.json").read_text(encoding="utf-8"))
    assert "request" in recorded["turns"][0]["steps"][0]
    # Every tool of the server, the ones never called too, as the live model saw it.
    assert recorded["tool_definitions"] == {
        tool["function"]["name"]: {
            "description": tool["function"]["description"],
            "input_schema": tool["function"]["parameters"],
        }
        for tool in live_tools
        if tool["function"]["name"] != "echo"
    }
    assert recorded["tool_definitions"]["forecast"]["input_schema"]["required"] == ["city"]
    replayed = run(config, out, "--format", "json")
    assert replayed.exit_code == 0, replayed.stdout
    checks = json.loads(replayed.stdout)["cases"][0]["checks"]
    assert [check["check"] for check in checks if check["check"].startswith("drift")] == [
        "drift: 2 recorded requests"
    ]


def test_a_server_that_never_answers_is_killed_with_the_case_abandoned_at_its_limit(
    tmp_path: Path,
) -> None:
    from .chat_server import ChatServer

    pidfile = tmp_path / "pid"
    silent = (
        f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    )
    with ChatServer() as chat:
        config = project(
            tmp_path,
            chat.url,
            [sys.executable, "-c", silent],
            "mcp_upstream_timeout_s = 60\n",
        )
        text = config.read_text(encoding="utf-8")
        config.write_text("[eval]\ncase_timeout_s = 1\n" + text, encoding="utf-8")
        suite = write_suite(tmp_path / "live", case("silent", "weather", "x"))
        result = record(config, suite, tmp_path / "recorded")
    assert result.exit_code == 1
    assert "did not finish within case_timeout_s=1 s" in result.stdout, result.stdout
    pid = int(pidfile.read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_recording_a_recording_again_calls_the_server_for_a_tool_it_only_defined(
    tmp_path: Path,
) -> None:
    """A definition without scripted results stands in for a tool that is not there;
    live, the server's own tool is there, and runs."""
    from .chat_server import ChatServer, text, tool_calls

    live = case("again", "count", "1")
    live["tool_definitions"] = {"count": {"input_schema": {"type": "object"}}}
    with ChatServer() as chat:
        chat.add([tool_calls(("c1", "count", {})), text("Counted.")])
        config = project(tmp_path, chat.url, [sys.executable, str(SDK_SERVER), "stdio"])
        suite = write_suite(tmp_path / "live", live)
        result = record(config, suite, tmp_path / "recorded")
    assert result.exit_code == 0, result.stdout + result.stderr
    recorded = json.loads((tmp_path / "recorded" / "case0.json").read_text(encoding="utf-8"))
    assert recorded["tool_results"] == {"count": [{"result": "1"}]}
    assert recorded["tool_definitions"]["count"]["description"] == "Counts its calls."
