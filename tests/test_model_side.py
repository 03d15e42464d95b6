"""What the model was shown: recorded for every agent, graded by the model-side families.

The reference loop and agents on each wire of the bridge (Chat Completions,
Responses, Anthropic Messages, through the official SDKs) leave every request
they made on the run record; the JSON report carries them when asked, and
``model_saw``, ``model_never_saw`` and ``tools_offered`` grade them.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .bridged_helpers import configure, factory, run, write_suite
from .cli_process import json_report
from .conftest import PROJECT, echo_case, zeroclaw

BRIDGE_AGENTS = PROJECT / "tests" / "bridge_agents"


def two_turn_case(expects: dict[str, Any]) -> dict[str, Any]:
    """Echo "hello", then answer a second turn in text: history, a tool result, two turns."""
    case = echo_case(model_name="two-turns")
    case["turns"].append(
        {
            "user_input": "And what did it say?",
            "steps": [{"response": {"type": "text", "content": "It said hello."}}],
        }
    )
    case["expects"] = expects
    return case


def project(directory: Path, *, config: str = "", cases: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "zeroclaw.toml").write_text(
        f'[eval]\nsuite_dir = "suite"\n{config}', encoding="utf-8"
    )
    write_suite(directory / "suite", *cases)
    return directory


def test_the_reference_loop_records_each_request_as_the_model_saw_it(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        config='report_requests = "all"\n',
        cases=[two_turn_case({"response_contains": ["hello"]})],
    )
    result = zeroclaw("eval", "run", "--format", "json", "--no-history", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    requests = json_report(result)["cases"][0]["model_requests"]

    assert [(r["turn"], r["step"]) for r in requests] == [(0, 0), (0, 1), (1, 0)]
    first, second, third = requests
    assert first["messages"] == [{"role": "user", "content": "Echo hello"}]
    assert first["tools"]["echo"]["description"] == "Echo back the given message."
    assert first["tools"]["echo"]["parameters"]["required"] == ["message"]
    assert first["settings"] == {}
    # Later requests say what they add to the one before: the call, then its result,
    # the id masked alike in both (c1 -> call_1), so the pairing stays visible.
    assert second["history"] == 1
    assert second["messages"] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "name": "echo", "arguments": {"message": "hello"}}],
        },
        {"role": "tool", "content": "hello", "tool_call_id": "call_1"},
    ]
    assert "tools" not in second and "settings" not in second
    assert third["history"] == 3
    assert third["messages"][-1] == {"role": "user", "content": "And what did it say?"}


def test_by_default_only_a_failed_cases_requests_are_reported(tmp_path: Path) -> None:
    passing = echo_case(model_name="passing")
    failing = echo_case(model_name="failing", expects={"response_contains": ["absent"]})
    root = project(tmp_path, cases=[passing, failing])
    result = zeroclaw("eval", "run", "--format", "json", "--no-history", cwd=root)
    assert result.returncode == 1
    reported = {case["name"]: case["model_requests"] for case in json_report(result)["cases"]}
    assert reported["passing"] == []
    assert [request["step"] for request in reported["failing"]] == [0, 1]


BRIDGED = {
    "chat.completions": ("echo_agent", "tests/agents"),
    "responses": ("responses_agent", "tests/bridge_agents"),
    "anthropic.messages": ("anthropic_agent", "tests/bridge_agents"),
}


@pytest.mark.parametrize("api", sorted(BRIDGED))
def test_each_bridge_endpoint_records_messages_tools_and_settings(tmp_path: Path, api: str) -> None:
    module, home = BRIDGED[api]
    config = configure(tmp_path / "agent", factory(f"{module}:make_agent"), report_requests="all")
    shutil.copy(PROJECT / home / f"{module}.py", tmp_path / "agent")
    expects = {
        "response_contains": ["hello"],
        "model_saw": [
            {"needle": "hello", "turn": 0, "step": 1, "role": "tool"},
            {"needle": "Echo hello", "turn": 1, "role": "user"},
        ],
        "tools_offered": {"exactly": ["echo"]},
        "model_never_saw": ["zc-"],  # the route's API key never reaches the model
    }
    suite = write_suite(tmp_path / "suite", two_turn_case(expects))
    result = run(config, suite, "--format", "json", "--no-history")
    document = json.loads(result.stdout)
    assert result.exit_code == 0, document["cases"][0]
    requests = document["cases"][0]["model_requests"]
    assert [(r["turn"], r["step"]) for r in requests] == [(0, 0), (0, 1), (1, 0)]
    assert requests[0]["messages"][-1] == {"role": "user", "content": "Echo hello"}
    assert list(requests[0]["tools"]) == ["echo"]
    assert requests[0]["tools"]["echo"]["parameters"]["properties"] == {
        "message": {"type": "string"}
    }
    tool_results = [m for m in requests[1]["messages"] if m["role"] == "tool"]
    assert tool_results == [{"role": "tool", "content": "hello", "tool_call_id": "call_1"}]
    settings = requests[0]["settings"]
    assert settings["model"] in ("echo-agent", "gpt-test", "claude-test")
    if api == "anthropic.messages":
        assert settings["max_tokens"] == 1024
    assert "stream" not in settings  # how the reply travels is not a setting


def test_a_tool_result_that_never_reached_the_model_fails_model_saw(tmp_path: Path) -> None:
    config = configure(tmp_path / "agent", factory("echo_agent:make_forgetful_agent"))
    expects = {"model_saw": [{"needle": "hello", "turn": 0, "step": 1, "role": "tool"}]}
    suite = write_suite(tmp_path / "suite", two_turn_case(expects))
    result = run(config, suite, "--format", "json", "--no-history")
    assert result.exit_code == 1
    (check,) = json.loads(result.stdout)["cases"][0]["checks"]
    assert check["check"] == 'model_saw: "hello" at turn 0 step 1 role tool'
    assert not check["passed"]
    assert check["detail"].startswith("never shown in 1 request")


def run_case(tmp_path: Path, case: dict[str, Any]) -> dict[str, Any]:
    root = project(tmp_path, cases=[case])
    result = zeroclaw("eval", "run", "--format", "json", "--no-history", cwd=root)
    assert result.stderr == ""
    document: dict[str, Any] = json_report(result)["cases"][0]
    return document


def test_model_side_checks_pass_and_fail_on_what_the_model_was_shown(tmp_path: Path) -> None:
    case = two_turn_case(
        {
            "model_saw": [
                {"needle": "Echo hello", "turn": 1, "role": "user"},  # history kept
                {"needle": "hello", "turn": 0, "step": 1, "role": "tool"},  # the real result
                {"needle": "Echo hello", "role": "assistant"},  # it never said so: fails
                {"needle": "anything", "turn": 1, "step": 5},  # no such request: fails
            ],
            "model_never_saw": [
                "sk-secret",
                {"needle": "The echo said", "turn": 1},  # turn 0's answer, in the history
            ],
            "tools_offered": {"at_least": ["echo"], "required": {"echo": ["message"]}},
        }
    )
    checks = {c["check"]: (c["passed"], c["detail"]) for c in run_case(tmp_path, case)["checks"]}
    assert checks == {
        'model_saw: "Echo hello" at turn 1 role user': (True, "shown at turn 1 step 0"),
        'model_saw: "hello" at turn 0 step 1 role tool': (True, "shown at turn 0 step 1"),
        'model_saw: "Echo hello" at role assistant': (
            False,
            checks['model_saw: "Echo hello" at role assistant'][1],
        ),
        'model_saw: "anything" at turn 1 step 5': (
            False,
            "no model request at turn 1 step 5 (recorded: 3 requests)",
        ),
        'model_never_saw: "sk-secret"': (True, "not shown in 3 requests"),
        'model_never_saw: "The echo said" at turn 1': (
            False,
            'shown at turn 1 step 0: "The echo said: hello"',
        ),
        "tools_offered: at least echo": (True, "as offered in 3 requests"),
        "tools_offered: echo requires message": (True, "required in 3 requests"),
    }
    assert checks['model_saw: "Echo hello" at role assistant'][1].startswith(
        "never shown in 3 requests"
    )


def test_tools_offered_exactly_names_what_is_missing_and_what_is_extra(tmp_path: Path) -> None:
    case = echo_case(expects={"tools_offered": {"exactly": ["echo", "shell"]}})
    (check,) = run_case(tmp_path, case)["checks"]
    assert not check["passed"]
    assert check["detail"] == "turn 0 step 0 offered echo: missing shell"
    case = echo_case(expects={"tools_offered": {"exactly": []}})
    (check,) = run_case(tmp_path / "none", case)["checks"]
    assert check["detail"] == "turn 0 step 0 offered echo: also offered echo"


@pytest.mark.parametrize(
    ("expects", "field", "message"),
    [
        ({"model_saw": [""]}, "expects.model_saw[0]", "at least 1 character"),
        ({"model_never_saw": [{"needle": ""}]}, "expects.model_never_saw[0].needle", "empty"),
        (
            {"model_saw": [{"needle": "Echo hello", "turn": 0}], "model_never_saw": ["hello"]},
            "expects.model_never_saw[0]",
            "contradicts model_saw 'Echo hello' at turn 0",
        ),
        ({"model_saw": [{"needle": "x", "role": "robot"}]}, "expects.model_saw[0]", ""),
        (
            {"tools_offered": {"exactly": ["echo"], "at_least": ["echo"]}},
            "expects.tools_offered",
            "give exactly one of exactly and at_least",
        ),
        (
            {"tools_offered": {"at_least": []}},
            "expects.tools_offered.at_least",
            "an empty at_least asserts nothing",
        ),
        (
            {"tools_offered": {"at_least": ["echo"], "required": {"shell": ["cmd"]}}},
            "expects.tools_offered.required.shell",
            "'shell' is not among the tools of at_least",
        ),
        (
            {"tools_offered": {"exactly": ["echo", "echo"]}},
            "expects.tools_offered.exactly[1]",
            "names 'echo' twice",
        ),
        (
            {"model_never_saw": ["a", {"needle": "b", "turn": 2}]},
            "expects.model_never_saw[1].turn=2",
            "no run reaches turn 2: the fixture has 1 turn, numbered from 0",
        ),
        (
            {"tools_offered": {"at_least": ["echo"], "turn": 1}},
            "expects.tools_offered.turn=1",
            "no run reaches turn 1: the fixture has 1 turn",
        ),
    ],
)
def test_model_side_entries_that_cannot_fail_or_contradict_are_refused(
    tmp_path: Path, expects: dict[str, Any], field: str, message: str
) -> None:
    root = project(tmp_path, cases=[echo_case(expects=expects)])
    result = zeroclaw("eval", "check", cwd=root)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "suite/case0.json" in result.stderr
    assert field in result.stderr
    assert message in result.stderr


def test_never_saw_is_not_satisfied_by_an_empty_run(tmp_path: Path) -> None:
    """ "Never saw" is certified only by requests that were made: eval check finds a
    case asserting only that still certifies something."""
    root = project(tmp_path, cases=[echo_case(expects={"model_never_saw": ["sk-secret"]})])
    result = zeroclaw("eval", "check", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "none is satisfied by an empty run" in result.stdout


def test_the_families_are_in_the_schema_and_the_plugin_listing() -> None:
    schema = json.loads(zeroclaw("eval", "schema").stdout)
    families = schema["properties"]["expects"]["properties"]
    for name in ("model_saw", "model_never_saw", "tools_offered"):
        assert "[plugin: model_side]" in families[name]["description"]
    listing = zeroclaw("eval", "plugins").stdout
    for name in ("model_saw", "model_never_saw", "tools_offered"):
        assert name in listing


def test_the_shipped_history_case_catches_an_agent_that_forgets_earlier_turns(
    tmp_path: Path,
) -> None:
    """The regression case asserting history directly fails for an agent that sends
    only the latest user message, though its scripted replies still play."""
    source = PROJECT / "evals" / "regression" / "multi_turn_history_reaches_the_model.json"
    fixture = json.loads(source.read_text(encoding="utf-8"))
    config = configure(tmp_path / "agent", factory("amnesiac_agent:make_agent"))
    (tmp_path / "agent" / "amnesiac_agent.py").write_text(AMNESIAC, encoding="utf-8")
    suite = write_suite(tmp_path / "suite", copy.deepcopy(fixture))
    result = run(config, suite, "--format", "json", "--no-history")
    document = json.loads(result.stdout)
    failed = [c["check"] for c in document["cases"][0]["checks"] if not c["passed"]]
    assert result.exit_code == 1
    assert failed and all(check.startswith("model_saw") for check in failed)


AMNESIAC = '''
"""An agent that sends the model only the latest user message: it forgets."""
import json, urllib.request


class Amnesiac:
    def __init__(self, base_url, api_key):
        self.url, self.key = base_url + "/chat/completions", api_key

    def run_turn(self, user_input):
        body = {"model": "m", "messages": [{"role": "user", "content": user_input}]}
        request = urllib.request.Request(
            self.url,
            json.dumps(body).encode(),
            {"Authorization": "Bearer " + self.key, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request) as response:
            return json.load(response)["choices"][0]["message"]["content"] or ""


def make_agent(*, base_url, api_key, workspace):
    return Amnesiac(base_url, api_key)
'''


def test_reported_requests_are_masked_and_bounded(tmp_path: Path) -> None:
    """Volatile values are masked the way a recording stores them, and a long text is cut."""
    volatile = "At 2026-12-03T12:34:56Z, run 123e4567-e89b-12d3-a456-426614174000 said hi"
    case = echo_case(expects={"response_contains": ["absent"]})
    case["turns"][0]["user_input"] = volatile + " " + "x" * 3000
    root = project(tmp_path, cases=[case])
    result = zeroclaw("eval", "run", "--format", "json", "--no-history", cwd=root)
    first = json_report(result)["cases"][0]["model_requests"][0]
    content = first["messages"][0]["content"]
    assert content.startswith("At <timestamp>, run <uuid> said hi xxx")
    assert len(content) == 2000 and content.endswith("…")


def test_a_case_that_hits_a_run_error_reports_the_requests_made_until_then(
    tmp_path: Path,
) -> None:
    """The agent asks once more than scripted: the error says so, and the report shows
    what it was sending when it did."""
    case = echo_case()
    case["turns"][0]["steps"].pop()  # the final text: the agent's second request goes unanswered
    root = project(tmp_path, cases=[case])
    result = zeroclaw("eval", "run", "--format", "json", "--no-history", cwd=root)
    assert result.returncode == 1
    reported = json_report(result)["cases"][0]
    assert "requested more responses than scripted" in reported["error"]
    requests = reported["model_requests"]
    assert [(r["turn"], r["step"]) for r in requests] == [(0, 0), (0, 1)]
    assert requests[1]["messages"][-1] == {
        "role": "tool",
        "content": "hello",
        "tool_call_id": "call_1",
    }


def test_a_bridged_case_that_hits_a_run_error_reports_its_requests_too(tmp_path: Path) -> None:
    config = configure(tmp_path / "agent", factory("echo_agent:make_agent"))
    case = echo_case()
    case["turns"][0]["steps"].pop()
    result = run(config, write_suite(tmp_path / "suite", case), "--format", "json", "--no-history")
    reported = json.loads(result.stdout)["cases"][0]
    assert reported["error"] is not None
    assert [(r["turn"], r["step"]) for r in reported["model_requests"]] == [(0, 0), (0, 1)]
