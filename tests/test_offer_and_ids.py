"""One tool offer for replay and live, and tool-call ids that pair: refused at admission."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import CaseReport, CheckResult, SuiteReport, hookimpl
from zeroclaw_eval.builtin.echo import EchoTool
from zeroclaw_eval.testing import run_cli

from .chat_server import ChatServer, text, tool_calls
from .conftest import echo_case, zeroclaw
from .live_helpers import write_config
from .live_helpers import zeroclaw as zeroclaw_live


def write_suite(tmp_path: Path, *cases: Any) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    for index, case in enumerate(cases):
        (suite / f"{index:02d}.json").write_text(json.dumps(case), encoding="utf-8")
    return suite


def two_calls(first_id: str, second_id: str) -> dict[str, Any]:
    case = echo_case(model_name="batched")
    calls = case["turns"][0]["steps"][0]["response"]["tool_calls"]
    calls[0]["id"] = first_id
    calls.append({"id": second_id, "name": "echo", "arguments": {"message": "again"}})
    case["expects"]["exact_tool_calls"] = 2
    return case


def test_two_scripted_calls_with_one_id_are_refused_naming_step_and_id(tmp_path: Path) -> None:
    write_suite(tmp_path, two_calls("c1", "c1"))

    run = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)
    check = zeroclaw("eval", "check", "--suite", "suite", cwd=tmp_path)

    for result in (run, check):
        assert result.returncode == 1
        assert (
            'Error: suite/00.json: turns[0].steps[0].response.tool_calls[1].id="c1": step 0 of '
            "turn 0 gives tool_calls[0] and tool_calls[1] the same id 'c1'; each call needs "
            "its own\n"
        ) in result.stderr
    assert run.stdout == ""


def test_distinct_ids_are_admitted(tmp_path: Path) -> None:
    write_suite(tmp_path, two_calls("c1", "c2"))
    result = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def offer_config(tmp_path: Path, tools: list[str], table: str = "eval.live") -> None:
    listed = ", ".join(f'"{tool}"' for tool in tools)
    (tmp_path / "zeroclaw.toml").write_text(
        f"[{table}]\nallowed_tools = [{listed}]\n", encoding="utf-8"
    )


#: The offer's place: [eval], where it belongs (every mode), and [eval.live], its older one.
TABLES = pytest.mark.parametrize("table", ["eval", "eval.live"])


@TABLES
def test_a_scripted_call_to_a_tool_left_out_of_the_offer_is_refused_naming_the_step(
    tmp_path: Path, table: str
) -> None:
    write_suite(tmp_path, echo_case())
    assert zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path).returncode == 0
    offer_config(tmp_path, [], table)

    result = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)

    assert result.returncode == 1
    assert (
        'Error: suite/00.json: turns[0].steps[0].response.tool_calls[0].name="echo": step 0 '
        "of turn 0 calls 'echo', which is registered but not offered to the agent "
        f"({table}.allowed_tools: none)\n"
    ) in result.stderr
    assert result.stdout == ""


def test_the_offer_is_set_in_one_place(tmp_path: Path) -> None:
    write_suite(tmp_path, echo_case())
    (tmp_path / "zeroclaw.toml").write_text(
        '[eval]\nallowed_tools = ["echo"]\n[eval.live]\nallowed_tools = []\n', encoding="utf-8"
    )
    result = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)
    assert result.returncode == 1
    assert "eval.allowed_tools and eval.live.allowed_tools are both set" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_call_to_a_tool_no_plugin_registers_is_still_a_case(tmp_path: Path) -> None:
    """The phantom-tool cases of the corpus: the model asks for a tool that does not exist."""
    case = echo_case(expects={"all_tools_succeeded": False})
    case["turns"][0]["steps"][0]["response"]["tool_calls"][0]["name"] = "shell"
    write_suite(tmp_path, case)
    offer_config(tmp_path, ["echo"])

    result = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr


def test_replay_offers_what_live_offers(tmp_path: Path) -> None:
    """With allowed_tools = [], replay dispatches no tool: the call fails as in live."""
    case = echo_case(
        expects={"tool_results_contain": [{"tool": "echo", "needle": "unknown tool 'echo'"}]}
    )
    write_suite(tmp_path, case)
    offer_config(tmp_path, [])
    # Admission refuses the scripted call first: the refusal is the guard...
    assert zeroclaw("eval", "check", "--suite", "suite", cwd=tmp_path).returncode == 1
    # ...and the live agent, offered nothing, reports the same failed call.
    live_case = {k: v for k, v in case.items()}
    live_case["turns"] = [{"user_input": "Echo hello"}]
    (tmp_path / "suite" / "00.json").write_text(json.dumps(live_case), encoding="utf-8")
    with ChatServer() as server:
        server.add([tool_calls(("c1", "echo", {"message": "hello"})), text("no echo")])
        write_config(tmp_path, server.url, allowed_tools=[])
        live = zeroclaw_live("eval", "run", "--mode", "live", "--suite", "suite", cwd=tmp_path)
    assert live.returncode == 0, live.stdout + live.stderr
    assert "tools" not in server.requests[0].body


@TABLES
def test_an_allowed_tool_that_is_not_registered_is_a_config_error_in_replay_too(
    tmp_path: Path, table: str
) -> None:
    write_suite(tmp_path, echo_case())
    offer_config(tmp_path, ["echo", "shell"], table)

    result = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)

    assert result.returncode == 1
    assert result.stderr == (
        f"Error: {table}.allowed_tools: 'shell' is not a registered tool (registered: echo)\n"
    )


def test_a_run_error_fails_a_non_gating_report_and_a_failed_check_does_not() -> None:
    failed = CaseReport("a", "a.json", (CheckResult("c", False, "no"),))
    broken = CaseReport("b", "b.json", error="case 'b': cannot connect")
    assert SuiteReport("s", (failed,), gating=False).exit_code() == 0
    assert SuiteReport("s", (failed, broken), gating=False).exit_code() == 1
    assert SuiteReport("s", (failed, broken)).exit_code() == 1
    # A case -x never started is listed with an error, but it is not a run error.
    skipped = CaseReport("c", "c.json", error="not run: the run stopped", ran=False)
    assert SuiteReport("s", (failed, skipped), gating=False).exit_code() == 0


def test_a_recording_that_replay_would_refuse_is_reported_and_not_written(
    tmp_path: Path,
) -> None:
    """Offered nothing, the live model still calls echo: the run is right to pass, but a
    fixture scripting that call would be refused, so it is not written."""
    case = {
        "model_name": "offered-nothing",
        "turns": [{"user_input": "Echo hello"}],
        "expects": {"tool_results_contain": [{"tool": "echo", "needle": "unknown tool"}]},
    }
    write_suite(tmp_path, case)
    with ChatServer() as server:
        server.add([tool_calls(("c1", "echo", {"message": "hello"})), text("no echo")])
        write_config(tmp_path, server.url, allowed_tools=[])
        result = zeroclaw_live("eval", "record", "--suite", "suite", "--out", "out", cwd=tmp_path)

    assert result.returncode == 1
    assert "✓ offered-nothing (suite/00.json): 1/1 checks" in result.stdout
    assert (
        'Error: out/00.json: turns[0].steps[0].response.tool_calls[0].name="echo": step 0 of '
        "turn 0 calls 'echo', which is registered but not offered to the agent "
        "(eval.live.allowed_tools: none) (recorded, not written)\n"
    ) in result.stderr
    assert "recorded 0/1 cases into out" in result.stderr
    assert list((tmp_path / "out").iterdir()) == []


class Clock(EchoTool):
    name = "clock"


class Shell(EchoTool):
    name = "shell"


class MoreTools:
    """Registers two more tools, so an offer lists several and leaves one out."""

    __name__ = "more-tools"

    @hookimpl
    def zeroclaw_eval_register_tools(self, register: Any) -> None:
        register("clock", Clock)
        register("shell", Shell)


def shell_case(where: str) -> dict[str, Any]:
    """A case that reaches the registered ``shell`` in one way: a scripted call, scripted
    results, or an expectation naming it."""
    case = echo_case()
    if where == "step":
        case["turns"][0]["steps"][0]["response"]["tool_calls"][0]["name"] = "shell"
    elif where == "results":  # checked before the step that calls it
        case["turns"][0]["steps"][0]["response"]["tool_calls"][0]["name"] = "shell"
        case["tool_results"] = {"shell": [{"result": "ok"}]}
    else:
        case["expects"]["tool_call_status"] = [{"tool": "shell", "status": "succeeded"}]
    return case


REFUSALS = [
    (
        "step",
        'turns[0].steps[0].response.tool_calls[0].name="shell": step 0 of turn 0 calls '
        "'shell', which is registered but not offered to the agent "
        "(eval.allowed_tools: {listed})",
    ),
    (
        "results",
        "tool_results.shell: scripts results for 'shell', which is registered but not "
        "offered to the agent (eval.allowed_tools: {listed})",
    ),
    (
        "expectation",
        'expects.tool_call_status[0].tool="shell": names no tool the agent is offered '
        "({listed}) nor one the script calls: only a call the agent was never given "
        "could pass it",
    ),
]
OFFERS = [('["clock", "echo"]', "clock, echo"), ("[]", "none")]


@pytest.mark.parametrize(
    ("where", "says", "offer", "listed"),
    # an empty offer refuses the expectation case's scripted echo call before its entry
    [(*r, *o) for r in REFUSALS for o in OFFERS if (r[0], o[1]) != ("expectation", "none")],
)
def test_each_refusal_lists_the_offer_it_holds_the_case_to(
    tmp_path: Path, where: str, says: str, offer: str, listed: str
) -> None:
    write_suite(tmp_path, shell_case(where))
    (tmp_path / "zeroclaw.toml").write_text(
        f'[eval]\nsuite_dir = "suite"\nallowed_tools = {offer}\n', encoding="utf-8"
    )
    result = run_cli(["eval", "check", "--config", tmp_path / "zeroclaw.toml"], MoreTools())
    assert result.exit_code == 1
    refusal = result.stderr.splitlines()[-1]
    assert refusal.endswith(f"suite/00.json: {says.format(listed=listed)}"), refusal


def test_an_allowed_tool_no_plugin_registers_names_every_registered_one(tmp_path: Path) -> None:
    write_suite(tmp_path, echo_case())
    offer_config(tmp_path, ["echo", "nope"], "eval")
    result = run_cli(
        ["eval", "run", "--suite", tmp_path / "suite", "--config", tmp_path / "zeroclaw.toml"],
        MoreTools(),
    )
    assert result.stderr == (
        "Error: eval.allowed_tools: 'nope' is not a registered tool "
        "(registered: clock, echo, shell)\n"
    )
