"""A team's agent served the case's tools over MCP: graded on what it dispatched.

The example agents of ``examples/agents/mcp_tools/`` (the official ``openai`` and
``mcp`` SDKs, the OpenAI Agents SDK, and pydantic-ai) run as real subprocesses of
the CLI; the faults are raised by ``tests/agents/mcp_fault_agent.py``, a raw HTTP
client. The frameworks are test dependencies: a missing one fails its tests
(pydantic-ai's are skipped only below Python 3.11, which it does not support).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from zeroclaw_eval import hookimpl
from zeroclaw_eval.protocol import ToolResult

from .bridged_helpers import case_errors, configure, factory, run, write_suite
from .cli_process import json_report
from .conftest import PROJECT, echo_case, zeroclaw

MCP_TOOLS = PROJECT / "examples" / "agents" / "mcp_tools"
PATH_ENV = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def run_example(config: Path, *args: str | Path) -> tuple[int, dict[str, Any]]:
    result = zeroclaw(
        "eval", "run", "--config", config, "--format", "json", *args, env=PATH_ENV, timeout=300
    )
    assert "Traceback" not in result.stderr
    # A framework that is not installed is a configuration error (exit 2): say which.
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json_report(result)


#: pydantic-ai (a test dependency) supports Python 3.11 and later; elsewhere a
#: missing framework fails its tests.
PYDANTIC_AI = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="pydantic-ai supports Python 3.11 and later"
)


def failed_checks(report: dict[str, Any]) -> dict[str, list[str]]:
    return {
        case["name"]: [check["check"] for check in case["checks"] if not check["passed"]]
        for case in report["cases"]
        if not case["passed"]
    }


@pytest.mark.parametrize(
    "config",
    [
        "zeroclaw.toml",
        "as-command.toml",
        "sdk.toml",
        pytest.param("pydantic.toml", marks=PYDANTIC_AI),
    ],
    ids=[
        "openai-and-mcp-in-process",
        "openai-and-mcp-as-command",
        "openai-agents-sdk",
        "pydantic-ai",
    ],
)
def test_an_agent_taking_its_tools_over_mcp_passes_on_what_it_dispatched(config: str) -> None:
    status, report = run_example(MCP_TOOLS / config)

    assert [case["error"] for case in report["cases"]] == [None] * 3
    assert failed_checks(report) == {}
    checks = {check["check"] for case in report["cases"] for check in case["checks"]}
    # Graded from the MCP side: the dispatched arguments, the tools' own error flags,
    # and the pairing of both sides of the boundary.
    assert {
        'tool_arguments_contain: weather "\\"Oslo\\""',
        "all_tools_succeeded: false",
        "served_tools: requested calls dispatched",
        "served_tools: dispatches requested",
        "served_tools: arguments as requested",
        "served_tools: results sent back",
    } <= checks
    assert status == 0


@PYDANTIC_AI
def test_the_pydantic_ai_agent_shows_the_model_its_history_across_turns(tmp_path: Path) -> None:
    # Live, against a real chat server that keeps every request: the second turn's
    # request must carry the first turn (pydantic-ai's own message history).
    import shutil

    from .chat_server import ChatServer, text, tool_calls

    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(MCP_TOOLS / "pydantic_agent.py", project)
    case = {
        "model_name": "two-turns",
        "tool_results": {"weather": [{"result": "the weather service timed out", "error": True}]},
        "turns": [{"user_input": "What is the weather in Oslo?"}, {"user_input": "Thanks"}],
        "expects": {"tool_results_contain": [{"tool": "weather", "needle": "timed out"}]},
    }
    write_suite(project / "suite", case)
    with ChatServer() as server:
        server.add(
            [
                tool_calls(("call_w", "weather", {"city": "Oslo"})),
                text("The weather service is not answering."),
                text("You are welcome."),
            ]
        )
        (project / "zeroclaw.toml").write_text(
            '[eval]\nsuite_dir = "suite"\nmode = "live"\n'
            f'[eval.live]\nbase_url = "{server.url}"\nmodel = "gpt-test"\n'
            '[eval.agent]\nfactory = "pydantic_agent:make_agent"\ntools = "served"\n'
            'dialect = "pydantic-ai"\n',
            encoding="utf-8",
        )
        status, report = run_example(project / "zeroclaw.toml")
        sent = [request.body["messages"] for request in server.requests]

    assert [case["error"] for case in report["cases"]] == [None]
    assert status == 0
    assert len(sent) == 3
    second_turn = [(m["role"], m.get("content")) for m in sent[2] if m["role"] != "system"]
    assert second_turn == [
        ("user", "What is the weather in Oslo?"),
        ("assistant", None),  # its tool call
        ("tool", '{"error":"the weather service timed out"}'),
        ("assistant", "The weather service is not answering."),
        ("user", "Thanks"),
    ]
    assert sent[2][2]["tool_calls"][0]["function"]["name"] == "weather"


ARGS = "served_tools: arguments as requested"
#: What upper-casing the dispatched arguments breaks, whichever framework does it.
REWRITTEN = {
    "served-echo-hello": [
        'tool_arguments_contain: echo[0] "\\"hello\\""',
        'tool_results_contain: echo[0] "hello"',
        ARGS,
    ],
    "served-weather-scripted": ['tool_arguments_contain: weather "\\"Paris\\""', ARGS],
    "served-weather-outage-then-echo": [
        'tool_arguments_contain: weather "\\"Oslo\\""',
        'tool_arguments_contain: echo "\\"sorry\\""',
        ARGS,
    ],
}


@pytest.mark.parametrize(
    ("config", "expected_checks", "expected_errors"),
    [
        ("rewriting.toml", REWRITTEN, {}),
        pytest.param("pydantic-rewriting.toml", REWRITTEN, {}, marks=PYDANTIC_AI),
        (
            "lying.toml",
            {"served-weather-outage-then-echo": ["served_tools: results sent back"]},
            {},
        ),
        (
            "lazy.toml",
            {
                "served-echo-hello": [
                    "exact_tool_calls: 1",
                    'tool_arguments_contain: echo[0] "\\"hello\\""',
                    'tool_results_contain: echo[0] "hello"',
                    "served_tools: requested calls dispatched",
                ],
                # Its scripted results are never used: the pairing says why, no run error.
                "served-weather-outage-then-echo": [
                    "exact_tool_calls: 2",
                    "all_tools_succeeded: false",
                    'tool_arguments_contain: weather "\\"Oslo\\""',
                    'tool_arguments_contain: echo "\\"sorry\\""',
                    'tool_results_contain: weather "timed out"',
                    "served_tools: requested calls dispatched",
                ],
                "served-weather-scripted": [
                    'tool_arguments_contain: weather "\\"Paris\\""',
                    'tool_results_contain: weather "light rain"',
                    "served_tools: requested calls dispatched",
                ],
            },
            {},
        ),
    ],
    ids=[
        "rewrites-an-argument",
        "rewrites-an-argument-in-pydantic-ai",
        "lies-about-an-error",
        "never-dispatches",
    ],
)
def test_a_broken_served_agent_fails_for_the_reason_its_bug_gives(
    config: str, expected_checks: dict[str, list[str]], expected_errors: dict[str, str]
) -> None:
    status, report = run_example(MCP_TOOLS / config)

    assert status == 1
    errors = {case["name"]: case["error"] for case in report["cases"] if case["error"]}
    assert errors == expected_errors
    assert failed_checks(report) == {
        name: checks for name, checks in expected_checks.items() if name not in expected_errors
    } | {name: [] for name in expected_errors}


# --- faults on the MCP route: one line on the right case, the suite goes on ----------------


def text_case(name: str, user_input: str = "go", **extra: Any) -> dict[str, Any]:
    """One turn the model answers with text; the agent's MCP doings are the test."""
    steps = [{"response": {"type": "text", "content": f"answered {user_input}"}}]
    return {
        "model_name": name,
        "turns": [{"user_input": user_input, "steps": steps}],
        "expects": {"response_contains": ["answered"]},
        **extra,
    }


class WaitForFile:
    """A tool that says it started (``PATH.started``), then returns once the file
    ``path`` names exists (10 s at most)."""

    name = "wait_for_file"
    description = "Wait for a file."
    parameters: Mapping[str, Any] = MappingProxyType(
        {"type": "object", "properties": {"path": {"type": "string"}}}
    )

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        path = Path(arguments["path"])
        path.with_suffix(".started").write_text("", encoding="utf-8")
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        return ToolResult("the file is there")


class WaitingTools:
    @hookimpl
    def zeroclaw_eval_register_tools(self, register: Any) -> None:
        register(WaitForFile.name, WaitForFile)


def served(spec: str) -> str:
    return f'{factory(spec)}\ntools = "served"'


def run_faulty(tmp_path: Path, spec: str, *cases: dict[str, Any], concurrency: int = 1) -> Any:
    from zeroclaw_eval.testing import run_cli

    agent = f"{served(spec)}\nmax_concurrency = {concurrency}"
    config = configure(tmp_path / "project", agent)
    suite = write_suite(tmp_path / "suite", *cases)
    args = ["eval", "run", "--config", str(config), "--suite", str(suite), "--format", "json"]
    return run_cli(args, WaitingTools())


@pytest.mark.parametrize(
    ("spec", "extra", "error"),
    [
        (
            "make_hang_up",
            {},
            "turn 0: the agent hung up before the result of its tools/call to 'wait_for_file' came",
        ),
        (
            "make_malformed",
            {},
            "turn 0: malformed JSON-RPC: the body is not JSON (Expecting property name "
            "enclosed in double quotes: line 1 column 2 (char 1))",
        ),
        (
            "make_late",
            {},
            "after the last turn: the agent called 'echo' over MCP after its case's last "
            "turn ended",
        ),
        (
            "make_oversized",
            {"tool_results": {"big": [{"result": "x" * 1_000_001}]}},
            "turn 0: tool 'big' returned 1000001 characters, more than the 1000000 a served "
            "result may carry: it was not sent",
        ),
    ],
    ids=["disconnect-mid-call", "malformed-json-rpc", "call-after-the-case-ended", "oversized"],
)
def test_a_fault_on_the_mcp_route_is_one_line_on_its_case(
    tmp_path: Path, spec: str, extra: dict[str, Any], error: str
) -> None:
    faulty = text_case("faulty", **extra)
    if "tool_results" in extra:  # the scripted result must be reachable by a scripted call
        faulty["turns"][0]["steps"].insert(
            0,
            {"response": {"type": "tool_calls", "tool_calls": [
                {"id": "b", "name": "big", "arguments": {}}]}},
        )  # fmt: skip
        faulty["turns"][0]["steps"][-1]["response"]["content"] = "answered go"
    result = run_faulty(tmp_path, f"mcp_fault_agent:{spec}", faulty)
    assert result.exit_code == 1, result.stdout
    assert case_errors(result) == {"faulty": f"case 'faulty': {error}"}


def test_a_request_on_another_cases_route_fails_the_case_that_made_it(tmp_path: Path) -> None:
    result = run_faulty(
        tmp_path,
        "mcp_fault_agent:make_by_input",
        text_case("crossing", "cross"),
        text_case("crossed", "victim"),
        concurrency=2,
    )
    assert result.exit_code == 1, result.stdout
    assert case_errors(result) == {
        "crossing": "case 'crossing': turn 0: a request on another case's MCP route "
        "(case 'crossed')",
        "crossed": None,
    }


def test_an_agent_with_tools_of_its_own_is_not_served_any(tmp_path: Path) -> None:
    # The default: the agent's own tools, no MCP server, the wire's evidence.
    config = configure(tmp_path / "project", factory("echo_agent:make_agent"))
    result = run(config, write_suite(tmp_path / "suite", echo_case()), "--format", "json")
    assert result.exit_code == 0, result.stdout
    checks = json.loads(result.stdout)["cases"][0]["checks"]
    assert not [check for check in checks if check["check"].startswith("served_tools")]


def test_record_keeps_the_scripted_tool_results_and_the_recording_replays_green(
    tmp_path: Path,
) -> None:
    import shutil

    from zeroclaw_eval.testing import run_cli

    from .chat_server import ChatServer, text, tool_calls

    live_case = {
        "model_name": "live-weather",
        "tool_results": {"weather": [{"result": "Oslo: 3 C, snow"}]},
        "turns": [{"user_input": "Weather in Oslo?"}],
        "expects": {
            "tool_arguments_contain": [{"tool": "weather", "needle": "Oslo"}],
            "tool_results_contain": [{"tool": "weather", "needle": "snow"}],
        },
    }
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(MCP_TOOLS / "served_agent.py", project)
    with ChatServer() as server:
        server.add([tool_calls(("call_7", "weather", {"city": "Oslo"})), text("Snow in Oslo.")])
        config = project / "zeroclaw.toml"
        config.write_text(
            f'[eval.live]\nbase_url = "{server.url}"\nmodel = "gpt-test"\n'
            '[eval.agent]\nfactory = "served_agent:make_agent"\ntools = "served"\n',
            encoding="utf-8",
        )
        suite = write_suite(tmp_path / "live", live_case)
        out = tmp_path / "recorded"
        result = run_cli(
            ["eval", "record", "--config", str(config), "--suite", str(suite), "--out", str(out)]
        )
        assert result.exit_code == 0, result.stdout + result.stderr
        sent = [request.body for request in server.requests]
    # The live model was offered the scripted tool, and read its scripted result.
    assert [tool["function"]["name"] for tool in sent[0]["tools"]] == ["echo", "weather"]
    assert sent[1]["messages"][-1]["content"] == "Oslo: 3 C, snow"
    recorded = json.loads((out / "case0.json").read_text(encoding="utf-8"))
    assert recorded["tool_results"] == {"weather": [{"result": "Oslo: 3 C, snow"}]}
    assert run(config, out).exit_code == 0


# --- record through a team's own MCP server -------------------------------------------------

WEATHER_SERVER = PROJECT / "tests" / "mcp_servers" / "weather_server.py"


def upstream_project(tmp_path: Path, server_url: str, extra: str = "") -> Path:
    """A served-agent project whose tools include the weather server's, live at ``server_url``."""
    import shutil

    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(MCP_TOOLS / "served_agent.py", project)
    shutil.copy(WEATHER_SERVER, project)
    upstream = json.dumps([sys.executable, "weather_server.py"])
    config = project / "zeroclaw.toml"
    config.write_text(
        f'[eval.live]\nbase_url = "{server_url}"\nmodel = "gpt-test"\n'
        '[eval.agent]\nfactory = "served_agent:make_agent"\ntools = "served"\n'
        f"mcp_upstream = {upstream}\n{extra}",
        encoding="utf-8",
    )
    return config


def weather_live_case(city: str) -> dict[str, Any]:
    return {
        "model_name": f"live-weather-{city.lower()}",
        "turns": [{"user_input": f"Weather in {city}?"}],
        "expects": {
            "tool_arguments_contain": [{"tool": "weather", "needle": city}],
            "tool_results_contain": [{"tool": "weather", "needle": city}],
        },
    }


def record(config: Path, suite: Path, out: Path) -> Any:
    from zeroclaw_eval.testing import run_cli

    args = ["eval", "record", "--config", str(config), "--suite", str(suite), "--out", str(out)]
    return run_cli(args)


def test_record_through_a_teams_mcp_server_replays_green_without_it(tmp_path: Path) -> None:
    from .chat_server import ChatServer, text, tool_calls

    with ChatServer() as server:
        server.add(
            [
                tool_calls(
                    ("c1", "weather", {"city": "Oslo"}), ("c2", "weather", {"city": "Atlantis"})
                ),
                text("Snow in Oslo; Atlantis is not a city."),
            ]
        )
        config = upstream_project(tmp_path, server.url)
        suite = write_suite(tmp_path / "live", weather_live_case("Oslo"))
        out = tmp_path / "recorded"
        result = record(config, suite, out)
        assert result.exit_code == 0, result.stdout + result.stderr
        sent = [request.body for request in server.requests]
    # The live model was offered the server's tool, with its own schema, and read its results.
    offered = {tool["function"]["name"]: tool["function"] for tool in sent[0]["tools"]}
    assert offered["weather"]["parameters"]["required"] == ["city"]
    assert [m["content"] for m in sent[1]["messages"] if m["role"] == "tool"] == [
        "Oslo: 3 C, snow",
        "no such city: Atlantis",
    ]
    recorded = json.loads((out / "case0.json").read_text(encoding="utf-8"))
    assert recorded["tool_results"] == {
        "weather": [
            {"result": "Oslo: 3 C, snow"},
            {"result": "no such city: Atlantis", "error": True},
        ]
    }
    # Its tools as the agent was served them (an object schema where the server named
    # no type), so that the replay offers the model the same tools.
    assert recorded["tool_definitions"] == {
        "clock": {
            "description": "The time now.",
            "input_schema": {"type": "object", "properties": {}},
        },
        "weather": {
            "description": "The weather in a city, now.",
            "input_schema": offered["weather"]["parameters"],
        },
    }
    # The replay needs no server: it is gone, and the case is green, with no drift.
    (config.parent / "weather_server.py").unlink()
    replayed = run(config, out, "--format", "json")
    assert replayed.exit_code == 0, replayed.stdout
    checks = json.loads(replayed.stdout)["cases"][0]["checks"]
    assert all(check["passed"] for check in checks)
    assert "drift: 2 recorded requests" in [check["check"] for check in checks]


@pytest.mark.parametrize(
    ("city", "error"),
    [
        ("hang", "did not answer tools/call within 1 s"),
        (
            "crash",
            "exited with status 3; its stderr ends: weather: the forecast backend is gone "
            "during tools/call",
        ),
    ],
    ids=["hangs", "dies"],
)
def test_a_teams_mcp_server_that_fails_during_record_is_one_line_on_the_case(
    tmp_path: Path, city: str, error: str
) -> None:
    from .chat_server import ChatServer, text, tool_calls

    with ChatServer() as server:
        server.add([tool_calls(("c1", "weather", {"city": city})), text("Sorry.")])
        config = upstream_project(tmp_path, server.url, "mcp_upstream_timeout_s = 1\n")
        suite = write_suite(tmp_path / "live", weather_live_case(city))
        result = record(config, suite, tmp_path / "recorded")
    assert result.exit_code == 1
    shown = f"{sys.executable} {config.parent / 'weather_server.py'}"
    lines = [line for line in result.stdout.splitlines() if "error:" in line]
    assert len(lines) == 1, result.stdout
    assert f"turn 0: the MCP server {shown} " in lines[0], lines[0]
    assert lines[0].endswith(error)
    assert not (tmp_path / "recorded" / "case0.json").exists()
