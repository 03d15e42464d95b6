"""A team's own agent under test through the model bridge: in-process and as a command.

The agents are real (``tests/agents/``): HTTP clients of the bridge with tools of
their own. The evidence graded is what crossed the wire.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval.config import AgentTable, load_config
from zeroclaw_eval.modes.base import RunMode
from zeroclaw_eval.plugins.registry import Registry

from .bridged_helpers import (
    case_errors,
    command,
    configure,
    echoing_plugin,
    factory,
    run,
    write_suite,
)
from .chat_server import ChatServer, text, tool_calls
from .conftest import PROJECT, echo_case

ATTACHMENTS = {
    "factory": factory("echo_agent:make_agent"),
    "command": command("echo_agent.py"),
}


def two_turn_case() -> dict[str, Any]:
    """Two turns, reusing the call id ``c1``: history and pairing across turns."""
    case = echo_case(model_name="two-turns")
    second = copy.deepcopy(case["turns"][0])
    second["user_input"] = "Now echo again"
    second["steps"][0]["response"]["tool_calls"][0]["arguments"] = {"message": "again"}
    second["steps"][1]["response"]["content"] = "The echo said: again"
    case["turns"].append(second)
    case["expects"] = {
        "response_contains": ["again"],
        "exact_tool_calls": 2,
        "tool_results_contain": [
            {"tool": "echo", "needle": "hello", "call_index": 0},
            {"tool": "echo", "needle": "again", "call_index": 1},
        ],
    }
    return case


@pytest.mark.parametrize("attachment", sorted(ATTACHMENTS))
def test_a_good_agent_replays_green(tmp_path: Path, attachment: str) -> None:
    config = configure(tmp_path / "project", ATTACHMENTS[attachment])
    suite = write_suite(tmp_path / "suite", echo_case(), two_turn_case())
    result = run(config, suite, "--format", "json")
    assert result.exit_code == 0, result.stdout
    document = json.loads(result.stdout)
    assert [case["passed"] for case in document["cases"]] == [True, True]
    assert all(check["passed"] for case in document["cases"] for check in case["checks"])


@pytest.mark.parametrize(
    "agent",
    [factory("echo_agent:make_forgetful_agent"), command("echo_agent.py", "--drop-results")],
)
def test_a_tool_result_that_never_comes_back_is_a_failed_call(tmp_path: Path, agent: str) -> None:
    config = configure(tmp_path / "project", agent)
    suite = write_suite(tmp_path / "suite", echo_case())
    result = run(config, suite)
    assert result.exit_code == 1
    assert (
        '✗ tool_results_contain: echo "hello": not found in the result: observed '
        '"tool \'echo\': no result came back: the agent sent no role \\"tool\\" message '
        "with tool_call_id 'c1' after the call\""
    ) in result.stdout
    checks = json.loads(run(config, suite, "--format", "json").stdout)["cases"][0]["checks"]
    passed = {check["check"].split(":")[0]: check["passed"] for check in checks}
    # The call was sent to the agent, so it counts; its result is what is missing.
    assert passed == {
        "response_contains": True,
        "exact_tool_calls": True,
        "tool_results_contain": False,
    }


def test_an_agent_that_skips_the_tool_ends_its_turn_early(tmp_path: Path) -> None:
    config = configure(tmp_path / "project", command("echo_agent.py", "--ignore-tools"))
    suite = write_suite(tmp_path / "suite", echo_case())
    result = run(config, suite, "--format", "json")
    assert result.exit_code == 1
    # The reference loop always asks the model again: there the fixture is at fault.
    # A bridged agent may answer without asking: the error names the agent's doing.
    assert case_errors(result) == {
        "echo-hello": "case 'echo-hello': turn 0, step 1: the agent ended the turn without "
        "asking the model again (1 scripted step left unused): it answered without sending "
        "the model what the script expects next"
    }


@pytest.mark.parametrize("attachment", sorted(ATTACHMENTS))
def test_asking_more_than_scripted_is_a_run_error_naming_turn_and_step(
    tmp_path: Path, attachment: str
) -> None:
    case = echo_case()
    del case["turns"][0]["steps"][1]  # the agent will ask again after the tool ran
    config = configure(tmp_path / "project", ATTACHMENTS[attachment])
    result = run(config, write_suite(tmp_path / "suite", case), "--format", "json")
    assert result.exit_code == 1
    error = case_errors(result)["echo-hello"]
    assert error is not None
    assert error.startswith(
        "case 'echo-hello': turn 0, step 1: the agent requested more responses than scripted "
        "(1 step scripted for this turn)"
    )


@pytest.mark.parametrize("attachment", sorted(ATTACHMENTS))
def test_unobservable_tool_success_is_refused_at_admission(tmp_path: Path, attachment: str) -> None:
    case = echo_case()
    case["expects"]["all_tools_succeeded"] = True
    config = configure(tmp_path / "project", ATTACHMENTS[attachment])
    suite = write_suite(tmp_path / "suite", case)
    result = run(config, suite)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "case0.json: expects.all_tools_succeeded=true: agent '" in result.stderr
    assert "cannot certify this family: a bridged agent runs its tools itself" in result.stderr
    # The same fixture is admitted, and passes, with the reference loop.
    assert run(config, suite, "--agent", "reference").exit_code == 0


def test_zeroclaw_eval_check_refuses_what_the_configured_agent_cannot_certify(
    tmp_path: Path,
) -> None:
    from zeroclaw_eval.testing import run_cli

    case = echo_case()
    case["expects"]["all_tools_succeeded"] = True
    config = configure(tmp_path / "project", ATTACHMENTS["command"])
    suite = write_suite(tmp_path / "suite", case)
    result = run_cli(["eval", "check", "--config", str(config), "--suite", str(suite)])
    assert result.exit_code == 1
    assert "expects.all_tools_succeeded=true: agent 'command " in result.stderr


@pytest.mark.parametrize("attachment", sorted(ATTACHMENTS))
def test_tool_arguments_contain_is_refused_for_an_agent_with_tools_of_its_own(
    tmp_path: Path, attachment: str
) -> None:
    # The script's arguments are all the harness sees of such an agent: the check
    # would pass or fail by the fixture alone, whatever the agent dispatched.
    case = echo_case()
    case["expects"]["tool_arguments_contain"] = [{"tool": "echo", "needle": "hello"}]
    config = configure(tmp_path / "project", ATTACHMENTS[attachment])
    result = run(config, write_suite(tmp_path / "suite", case))
    assert result.exit_code == 1
    line = next(
        line for line in result.stderr.splitlines() if "expects.tool_arguments_contain" in line
    )
    assert line.endswith(
        "cannot certify this family: a bridged agent runs its tools itself, so the harness "
        "sees only the arguments the script sent it, never those the agent dispatched: the "
        "check could not fail; serve the agent the case's tools over MCP "
        '([eval.agent] tools = "served") to grade them'
    )
    assert run(config, write_suite(tmp_path / "suite", case), "--agent", "reference").exit_code == 0


@pytest.mark.parametrize("attachment", sorted(ATTACHMENTS))
def test_live_mode_forwards_the_agents_requests_and_record_writes_replay(
    tmp_path: Path, attachment: str
) -> None:
    live_case = {
        "model_name": "live-echo",
        "turns": [{"user_input": "Echo hello"}],
        "expects": {"tool_results_contain": [{"tool": "echo", "needle": "hello"}]},
    }
    script = [tool_calls(("call_9", "echo", {"message": "hello"})), text("echoed hello")]
    with ChatServer() as server:
        server.add(script)
        config = configure(
            tmp_path / "project",
            ATTACHMENTS[attachment],
        )
        config.write_text(
            config.read_text(encoding="utf-8").replace(
                "[eval]\n",
                f'[eval]\n[eval.live]\nbase_url = "{server.url}"\nmodel = "gpt-test"\n',
            ),
            encoding="utf-8",
        )
        suite = write_suite(tmp_path / "live", live_case)
        out = tmp_path / "recorded"
        from zeroclaw_eval.testing import run_cli

        result = run_cli(
            ["eval", "record", "--config", str(config), "--suite", str(suite), "--out", str(out)]
        )
        assert result.exit_code == 0, result.stdout + result.stderr
        sent = [request.body for request in server.requests]
    # The agent's own conversation and tool reached the real endpoint.
    assert sent[0]["model"] == "gpt-test"
    assert sent[0]["tools"][0]["function"]["name"] == "echo"
    assert sent[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_9", "content": "hello"}
    recorded = json.loads((out / "case0.json").read_text(encoding="utf-8"))
    steps = recorded["turns"][0]["steps"]
    assert steps[0]["response"]["tool_calls"][0]["arguments"] == {"message": "hello"}
    assert steps[1]["response"]["content"] == "echoed hello"
    # And the recording replays green through the same agent.
    assert run(config, out).exit_code == 0


def test_the_own_agent_guide_configures_both_attachments_as_written(tmp_path: Path) -> None:
    section = (PROJECT / "docs" / "how-to" / "own-agent.md").read_text(encoding="utf-8")
    toml = re.findall(r"```toml\n(.*?)```", section, re.S)[0]
    tables = []
    for index, table in enumerate(toml.strip().split("\n\n")):
        config = tmp_path / f"{index}.toml"
        config.write_text(table, encoding="utf-8")
        tables.append(load_config(config).config.agent)
    assert tables == [
        AgentTable(factory="my_agent.harness:make_agent"),
        AgentTable(
            command=["node", "agent.mjs"],
            env={"LOG_LEVEL": "debug"},
            grace_s=5.0,
            max_concurrency=4,
        ),
    ]
    protocol = re.findall(r"```text\n(.*?)```", section, re.S)[0]
    lines = [json.loads(line[line.index("{") :]) for line in protocol.splitlines()]
    assert [line["type"] for line in lines] == ["turn", "reply", "error"]


def test_a_plugin_registers_a_bridged_agent_by_name(tmp_path: Path) -> None:
    from zeroclaw_eval.testing import run_cli

    suite = write_suite(tmp_path / "suite", echo_case(), two_turn_case())
    args = ["eval", "run", "--suite", str(suite), "--agent", "echoing"]
    assert run_cli(args, echoing_plugin(tmp_path)).exit_code == 0
    refused = echo_case()
    refused["expects"]["all_tools_succeeded"] = True
    write_suite(tmp_path / "suite", refused)
    result = run_cli(args, echoing_plugin(tmp_path))
    assert result.exit_code == 1
    assert "expects.all_tools_succeeded=true: agent 'echoing' cannot certify" in result.stderr


def test_the_harness_tool_offer_does_not_bind_an_agent_with_tools_of_its_own(
    tmp_path: Path,
) -> None:
    config = configure(tmp_path / "project", ATTACHMENTS["command"])
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("[eval]\n", "[eval]\n[eval.live]\nallowed_tools = []\n"), encoding="utf-8"
    )
    suite = write_suite(tmp_path / "suite", echo_case())
    assert run(config, suite).exit_code == 0  # echo is the agent's own tool
    refused = run(config, suite, "--agent", "reference")
    assert refused.exit_code == 1
    assert "registered but not offered to the agent" in refused.stderr


def test_served_tools_lift_exactly_the_refusals_the_mcp_side_answers(
    registry: Registry, replay: RunMode
) -> None:
    """A bridged agent with tools of its own cannot certify a tool's success nor
    the arguments it dispatched (a ``tool_sequence`` step comparing them included);
    served the case's tools over MCP, it can: the success flag and the arguments
    then come from the MCP side."""
    from zeroclaw_eval.agents.command import CommandAgent
    from zeroclaw_eval.case.admission import admit_data
    from zeroclaw_eval.config import AgentTable
    from zeroclaw_eval.errors import AdmissionError

    entries = {
        "all_tools_succeeded": True,
        "tool_call_status": [{"tool": "echo", "status": "succeeded"}],
        "tool_arguments_contain": [{"tool": "echo", "needle": "hi"}],
        "tool_sequence": [{"mode": "exact", "steps": [{"tool": "echo", "arguments": {}}]}],
        "tool_results_contain": [{"tool": "echo", "needle": "hi"}],
        "tools_used": ["echo"],
    }
    own = CommandAgent(AgentTable(command=["agent"]), Path("."), "eval.agent")
    served = CommandAgent(AgentTable(command=["agent"], tools="served"), Path("."), "eval.agent")
    refused = set()
    for family, entry in entries.items():
        data = echo_case(expects={family: entry})
        admit_data(data, registry, replay, source="case.json", agent=served)
        try:
            admit_data(data, registry, replay, source="case.json", agent=own)
        except AdmissionError as error:
            assert "cannot certify this family" in str(error)
            refused.add(family)
    assert refused == {
        "all_tools_succeeded",
        "tool_call_status",
        "tool_arguments_contain",
        "tool_sequence",
    }
    # Compared with no arguments, a sequence grades only the order of the calls.
    ordered = [{"mode": "exact", "steps": [{"tool": "echo"}]}]
    admit_data(
        echo_case(expects={"tool_sequence": ordered}), registry, replay, source="c", agent=own
    )
