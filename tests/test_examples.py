"""The example agents of ``examples/agents/``, run by the real ``zeroclaw`` console script.

Each good example's suite must pass (exit 0) and each deliberately broken
variant's must fail (exit 1) on exactly the checks its bug breaks, with no run
error standing in for them. And the regression suite's ``echo`` cases must replay
green through the ``openai``-SDK example agent too, and through two more agents of
``tests/bridge_agents`` (one on the Responses API, one on the ``anthropic`` SDK):
the same fixtures, graded the same way, through independent agents.

These runs need ``node`` (Node 20) and the ``openai`` package; under CI a
missing one fails the tests instead of skipping them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import json_report
from tests.conftest import PROJECT, zeroclaw

EXAMPLES = PROJECT / "examples" / "agents"
OPENAI_SDK = EXAMPLES / "openai_sdk"
NODE = EXAMPLES / "node"
REGRESSION = PROJECT / "evals" / "regression"

# The command examples run `python` and `node` from PATH: put this interpreter's
# environment (where openai is installed) first, as an activated one would be.
PATH_ENV = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def require_node() -> None:
    if shutil.which("node") is None:
        message = "node (Node 20) is not on PATH: the Node example agent cannot run"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def run_example(
    config: Path, *args: str | Path, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    result = zeroclaw(
        "eval", "run", "--config", config, "--format", "json", *args,
        env={**PATH_ENV, **(env or {})}, timeout=300,
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    return result.returncode, json_report(result)


def failed_checks(report: dict[str, Any]) -> dict[str, list[str]]:
    """Case name -> the names of its failed checks, for the cases that failed."""
    return {
        case["name"]: [check["check"] for check in case["checks"] if not check["passed"]]
        for case in report["cases"]
        if not case["passed"]
    }


def suite_size(config: Path) -> int:
    return len(list((config.parent / "suite").glob("*.json")))


@pytest.mark.parametrize(
    "config",
    [OPENAI_SDK / "zeroclaw.toml", OPENAI_SDK / "as-command.toml", NODE / "zeroclaw.toml"],
    ids=["openai-sdk-in-process", "openai-sdk-as-command", "node-as-command"],
)
def test_a_good_example_agent_passes_its_suite(config: Path) -> None:
    if config.parent == NODE:
        require_node()
    status, report = run_example(config)

    assert report["errors"] == []
    assert [case["error"] for case in report["cases"]] == [None] * len(report["cases"])
    assert failed_checks(report) == {}
    assert report["total"] == suite_size(config) >= 3
    assert status == 0


NO_RESULT = "tool_results_contain"
SHA256_OF_HELLO = "7b76b0849c2e9a6a397ec9fe88fcd5489626b2b3a1dc47c47958bbe59da04390"  # "héllo 你好"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            OPENAI_SDK / "forgetful.toml",
            {
                "notes-agent-batched-calls": [
                    f'{NO_RESULT}: echo[0] "ping"',
                    f"{NO_RESULT}: read_note[0] \"no note named 'nothing-here.txt'\"",
                    f'{NO_RESULT}: echo[1] "(empty)"',
                ],
                "notes-agent-echo-hello": [f'{NO_RESULT}: echo[0] "hello"'],
                "notes-agent-note-roundtrip": [
                    f'{NO_RESULT}: write_note[0] "saved groceries.txt"',
                    f'{NO_RESULT}: read_note[0] "oat milk, lemons"',
                ],
            },
        ),
        (
            NODE / "fabricating.toml",
            {
                "node-agent-echo-hello": [f'{NO_RESULT}: echo[0] "hello from Node"'],
                "node-agent-sha256": [
                    f'{NO_RESULT}: sha256[0] "{SHA256_OF_HELLO}"',
                    f'{NO_RESULT}: echo[0] "héllo 你好"',
                ],
            },
        ),
    ],
    ids=["openai-sdk-drops-tool-results", "node-fabricates-tool-results"],
)
def test_a_broken_example_agent_fails_on_the_checks_its_bug_breaks(
    config: Path, expected: dict[str, list[str]]
) -> None:
    if config.parent == NODE:
        require_node()
    status, report = run_example(config)

    assert status == 1
    assert report["errors"] == []
    # The bug shows as failed checks, not as a run error that would hide them.
    assert [case["error"] for case in report["cases"]] == [None] * len(report["cases"])
    assert failed_checks(report) == expected
    assert report["passed"] == report["total"] - len(expected) >= 1


def echo_only(fixture: dict[str, Any]) -> bool:
    """Whether every tool call the fixture scripts is a call to ``echo``."""
    return all(
        call["name"] == "echo"
        for turn in fixture["turns"]
        for step in turn.get("steps") or ()
        for call in step["response"].get("tool_calls") or ()
    )


#: What an agent with tools of its own cannot certify: its tools' success flags, and
#: the arguments it really dispatched; the harness refuses them at admission for
#: such an agent.
UNCERTIFIABLE = ("all_tools_succeeded", "tool_arguments_contain")

#: Families that rest on the success flags or the dispatched arguments too (answers
#: bound to evidence, data flowing between calls): dropped beside those above.
EVIDENCE_BOUND = ("response_grounded", "response_claims_backed", "tool_data_flow")


def without_arguments(sequence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tool_sequence`` entries comparing no arguments: the order of the calls is still
    graded for an agent with tools of its own, the arguments it dispatched are not."""
    unread = ("arguments", "match", "paths", "ignore")
    return [
        {
            **entry,
            "steps": [{k: v for k, v in s.items() if k not in unread} for s in entry["steps"]],
        }
        for entry in sequence
    ]


BRIDGE_AGENTS = PROJECT / "tests" / "bridge_agents"


def agent_config(directory: Path, module: str) -> Path:
    """A config attaching ``module:make_agent`` of tests/bridge_agents, copied beside it."""
    directory.mkdir()
    shutil.copy(BRIDGE_AGENTS / f"{module}.py", directory)
    config = directory / "zeroclaw.toml"
    config.write_text(f'[eval.agent]\nfactory = "{module}:make_agent"\n', encoding="utf-8")
    return config


@pytest.mark.parametrize(
    "agent",
    [
        "notes-agent",  # the example agent: openai SDK, Chat Completions, streaming
        "responses_agent",  # openai SDK, Responses API, stateful (previous_response_id)
        "anthropic_agent",  # anthropic SDK, Messages API, streaming
    ],
)
def test_the_regression_echo_cases_replay_green_through_an_sdk_agent(
    tmp_path: Path, agent: str
) -> None:
    if agent == "notes-agent":
        config = OPENAI_SDK / "zeroclaw.toml"
    else:
        config = agent_config(tmp_path / "agent", agent)
    run_regression_echo_cases(tmp_path, config)


def test_a_command_agent_on_the_anthropic_sdk_finds_the_bridge_in_its_environment(
    tmp_path: Path,
) -> None:
    """The agent builds ``anthropic.Anthropic()`` with no arguments: the base URL and
    key it uses are the ones the harness set, over whatever the caller's environment
    held (here a key and an endpoint that would fail every request)."""
    directory = tmp_path / "agent"
    directory.mkdir()
    shutil.copy(BRIDGE_AGENTS / "anthropic_agent.py", directory)
    argv = [sys.executable, "anthropic_agent.py"]
    config = directory / "zeroclaw.toml"
    # Each case starts a process that imports the SDK (about 2 s of CPU): two at a
    # time, so that this test is not the suite's longest pole.
    table = f"[eval.agent]\ncommand = {json.dumps(argv)}\nmax_concurrency = 2\n"
    config.write_text(table, encoding="utf-8")
    stale = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "sk-stale"}
    run_regression_echo_cases(tmp_path, config, env=stale)


def run_regression_echo_cases(
    tmp_path: Path, config: Path, env: dict[str, str] | None = None
) -> None:
    suite = tmp_path / "regression-echo"
    suite.mkdir()
    copied = dropped = 0
    for source in sorted(REGRESSION.glob("*.json")):
        fixture = json.loads(source.read_text(encoding="utf-8"))
        # The fault cases are met by each SDK's own client (tests/test_bridge_faults.py).
        if not echo_only(fixture) or source.name.startswith("fault_"):
            continue
        if [fixture["expects"].pop(family, None) for family in UNCERTIFIABLE] != [None, None]:
            dropped += 1
        for family in EVIDENCE_BOUND:
            fixture["expects"].pop(family, None)
        if "tool_sequence" in fixture["expects"]:
            fixture["expects"]["tool_sequence"] = without_arguments(
                fixture["expects"]["tool_sequence"]
            )
        text = json.dumps(fixture, ensure_ascii=False, indent=2)
        (suite / source.name).write_text(text, encoding="utf-8")
        copied += 1
    assert copied >= 15 and dropped >= 10  # the suite really is exercised

    status, report = run_example(config, "--suite", suite, env=env)

    assert failed_checks(report) == {}
    assert [case["error"] for case in report["cases"]] == [None] * copied
    assert report["total"] == copied
    assert status == 0


def test_a_regression_case_using_the_uncertifiable_family_is_refused_for_the_sdk_agent(
    tmp_path: Path,
) -> None:
    shutil.copy(REGRESSION / "echo_wrong_key_returns_empty_marker.json", tmp_path)
    result = zeroclaw(
        "eval",
        "run",
        "--config",
        OPENAI_SDK / "zeroclaw.toml",
        "--suite",
        tmp_path,
        env=PATH_ENV,
        timeout=120,
    )

    assert result.returncode == 1
    assert "expects.tool_arguments_contain" in result.stderr
    assert "cannot certify this family" in result.stderr
    assert "Traceback" not in result.stderr
