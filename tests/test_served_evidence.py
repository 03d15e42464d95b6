"""Boundary evidence for agents that talk in different ways, served their tools over MCP.

``tests/agents/loop_agent.py`` is an honest agent loop on raw HTTP that can talk
as most frameworks do (a ``role: "tool"`` message per result) or as smolagents
does (results flattened into a user message, the answer given through its own
``final_answer`` tool), and whose broken factories lie, pad or cut a result.
Each runs through the CLI in this process.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from .bridged_helpers import configure, factory, run, write_suite


def served_config(tmp_path: Path, spec: str, *extra: str) -> Path:
    agent = "\n".join([factory(f"loop_agent:{spec}"), 'tools = "served"', *extra])
    return configure(tmp_path / "project", agent)


def calls_step(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "response": {
            "type": "tool_calls",
            "tool_calls": [
                {"id": call_id, "name": name, "arguments": arguments}
                for call_id, name, arguments in calls
            ],
        }
    }


def text_step(content: str) -> dict[str, Any]:
    return {"response": {"type": "text", "content": content}}


def report(tmp_path: Path, config: Path, *cases: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    result = run(config, write_suite(tmp_path / "suite", *cases), "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def failed(document: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    return {
        case["name"]: [(c["check"], c["detail"]) for c in case["checks"] if not c["passed"]]
        for case in document["cases"]
        if not case["passed"]
    }


TWO_CITIES = {
    "model_name": "two-cities",
    "tool_results": {
        "city_lookup": [{"result": "Paris-1 has one result"}, {"result": "Paris-2 has another"}]
    },
    "turns": [
        {
            "user_input": "Look up both",
            "steps": [
                calls_step(
                    ("call_1", "city_lookup", {"city": "Paris-1"}),
                    ("call_2", "city_lookup", {"city": "Paris-2"}),
                ),
                text_step("Both looked up"),
            ],
        }
    ],
    "expects": {
        "tool_sequence": [
            {
                "mode": "exact",
                "steps": [
                    {"tool": "city_lookup", "arguments": {"city": "Paris-1"}},
                    {"tool": "city_lookup", "arguments": {"city": "Paris-2"}},
                ],
            }
        ],
        "tool_results_contain": [
            {"tool": "city_lookup", "needle": "Paris-1 has one", "call_index": 0},
            {"tool": "city_lookup", "needle": "Paris-2 has another", "call_index": 1},
        ],
    },
}


def test_a_scripted_result_goes_to_the_call_that_asked_for_it_in_any_order(
    tmp_path: Path,
) -> None:
    # The agent dispatches the step's calls in reverse order, as a framework running
    # them concurrently may: each city still gets its own scripted result, and the
    # calls count in the order the model asked for them, whatever the agent's order.
    status, document = report(tmp_path, served_config(tmp_path, "make_reversing"), TWO_CITIES)
    assert failed(document) == {}
    assert status == 0


#: A smolagents-style case: the city looked up, then the answer through final_answer.
LOOKUP = {
    "model_name": "lookup",
    "tool_results": {
        "city_lookup": [
            {"result": "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo"}
        ]
    },
    "turns": [
        {
            "user_input": "How many people live in Paris?",
            "steps": [
                calls_step(("call_1", "city_lookup", {"city": "Paris"})),
                calls_step(("call_2", "final_answer", {"answer": "About 2.1 million."})),
            ],
        }
    ],
    "expects": {
        "response_contains": ["2.1 million"],
        "exact_tool_calls": 1,
        "tool_results_contain": [{"tool": "city_lookup", "needle": "2,102,650"}],
    },
}

#: The same, with the lookup failing.
FAILED_LOOKUP = {
    **LOOKUP,
    "model_name": "failed-lookup",
    "tool_results": {"city_lookup": [{"result": "no such city: Paris", "error": True}]},
    "expects": {"all_tools_succeeded": False, "response_contains": ["2.1 million"]},
}

SMOLAGENTS = 'dialect = "smolagents"'


def test_a_flattening_agent_that_answers_through_its_own_tool_passes_when_honest(
    tmp_path: Path,
) -> None:
    config = served_config(tmp_path, "make_observing", SMOLAGENTS)
    status, document = report(tmp_path, config, LOOKUP, FAILED_LOOKUP)
    assert failed(document) == {}
    assert status == 0
    checks = {c["check"]: c["detail"] for c in document["cases"][0]["checks"]}
    assert checks["served_tools: requested calls dispatched"] == "1 requested call dispatched"
    assert checks["exact_tool_calls: 1"] == "observed 1 call: city_lookup"


ANSWERED = {**LOOKUP, "model_name": "answered", "expects": {"tool_calls_answered": True}}


@pytest.mark.parametrize("served", [True, False], ids=["served", "own-tools"])
def test_a_flattening_agent_refuses_tool_calls_answered_which_it_could_never_pass(
    tmp_path: Path, served: bool
) -> None:
    # Its results come back as one user text per step, tied to no call id: the check
    # follows each result to its call by id, so even this honest agent would fail it.
    make = served_config if served else own_config
    case = ANSWERED if served else {k: v for k, v in ANSWERED.items() if k != "tool_results"}
    result = run(make(tmp_path, "make_observing", SMOLAGENTS), write_suite(tmp_path / "s", case))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].endswith(
        "expects.tool_calls_answered=true: agent 'factory loop_agent:make_observing' cannot "
        "certify this family: dialect 'smolagents': it shows the model the results of a "
        "step's calls together, in one text tied to no call id, so the wire never says "
        "which call a result answers"
    )
    # Where the wire ties each result to its call, the same case is admitted and passes.
    status, document = report(
        tmp_path / "chat",
        served_config(tmp_path / "chat", "make_agent"),
        {
            **ANSWERED,
            "turns": [
                {
                    **LOOKUP["turns"][0],
                    "steps": [
                        LOOKUP["turns"][0]["steps"][0],
                        {"response": {"type": "text", "content": "2.1 million"}},
                    ],
                }
            ],
        },
    )
    assert (status, failed(document)) == (0, {})


def test_read_as_tool_messages_the_same_agent_looks_like_a_liar(tmp_path: Path) -> None:
    # The reason the dialect exists: without it, the honest agent is red.
    status, document = report(tmp_path, served_config(tmp_path, "make_observing"), LOOKUP)
    assert status == 1
    assert ("served_tools: requested calls dispatched", "1 requested call dispatched") not in (
        failed(document)["lookup"]
    )
    assert dict(failed(document)["lookup"])["served_tools: results sent back"] == (
        "turn 0: 'city_lookup' call 'call_1': the agent sent the model no result for it"
    )


def test_a_flattening_agent_that_lies_pads_or_cuts_a_result_fails_for_that(
    tmp_path: Path,
) -> None:
    result = "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo"
    expected = {
        "make_observing_liar": (
            FAILED_LOOKUP,
            "turn 0: 'city_lookup' call 'call_1': the tool returned (an error) "
            "'no such city: Paris', the agent showed the model 'Observation:\\nok, done'",
        ),
        "make_observing_padder": (
            LOOKUP,
            f"turn 0: 'city_lookup' call 'call_1': the tool returned {result!r}, the agent "
            f"showed the model ...{result + ' (cached fallback)'!r}",
        ),
        "make_observing_truncator": (
            LOOKUP,
            f"turn 0: 'city_lookup' call 'call_1': the tool returned {result!r}, the agent "
            f"showed the model {'Observation:' + chr(10) + result[:16]!r}",
        ),
    }
    for spec, (case, detail) in expected.items():
        directory = tmp_path / spec
        status, document = report(directory, served_config(directory, spec, SMOLAGENTS), case)
        assert status == 1, spec
        assert failed(document) == {
            case["model_name"]: [("served_tools: results sent back", detail)]
        }


def test_an_agent_that_pads_or_cuts_a_tool_message_fails_for_that(tmp_path: Path) -> None:
    case = {**LOOKUP, "turns": [dict(LOOKUP["turns"][0])]}
    case["turns"][0]["steps"] = [LOOKUP["turns"][0]["steps"][0], text_step("About 2.1 million.")]
    for spec, sent in (("make_padder", "\nfallback: 12 C"), ("make_truncator", None)):
        directory = tmp_path / spec
        status, document = report(directory, served_config(directory, spec), case)
        assert status == 1, spec
        [(check, detail)] = failed(document)["lookup"]
        assert check == "served_tools: results sent back"
        assert ("fallback: 12 C" in detail) is (sent is not None), detail


CODE_CASE = {
    "model_name": "code",
    "turns": [
        {
            "user_input": "Echo hello",
            "steps": [
                text_step('Let me call it.\ncall: echo {"message": "hello"}'),
                text_step("The echo said hello."),
            ],
        }
    ],
    "expects": {
        "tool_sequence": [
            {"mode": "exact", "steps": [{"tool": "echo", "arguments": {"message": "hello"}}]}
        ],
        "tool_results_contain": [{"tool": "echo", "needle": "hello"}],
        "response_contains": ["hello"],
    },
}


def test_a_code_writing_agent_served_its_tools_is_graded_on_its_dispatches(
    tmp_path: Path,
) -> None:
    config = served_config(tmp_path, "make_coder", 'dialect = "smolagents-code"')
    status, document = report(tmp_path, config, CODE_CASE)
    assert failed(document) == {}
    assert status == 0
    [case] = document["cases"]
    assert not [c for c in case["checks"] if c["check"].startswith("served_tools")]
    assert case["warnings"] == [
        "served_tools: does not apply: the agent's model writes code that calls the tools, "
        "so no tool call crosses the model's side; the MCP dispatches are the case's calls"
    ]
    # A call it makes up without dispatching is missing from the calls: red.
    lazy = {**CODE_CASE, "expects": {"tools_used": ["echo"]}}
    lazy["turns"] = [{**CODE_CASE["turns"][0], "steps": [text_step("hello, I think")]}]
    assert report(tmp_path / "lazy", config, lazy)[0] == 1


def test_a_code_writing_agent_gets_scripted_results_no_scripted_call_reaches(
    tmp_path: Path,
) -> None:
    """Its model writes the calls as code: the script says nothing of how often a
    tool is called, so a scripted result is admitted; one the run leaves unused is
    still a run error, since no pairing says it."""
    config = served_config(tmp_path, "make_coder", 'dialect = "smolagents-code"')
    lookup = {
        "model_name": "lookup",
        "tool_results": {"city_lookup": [{"result": "Paris, France: population 2,102,650"}]},
        "turns": [
            {
                "user_input": "Look up Paris",
                "steps": [
                    text_step('call: city_lookup {"city": "Paris"}'),
                    text_step("Paris has 2,102,650 people."),
                ],
            }
        ],
        "expects": {
            "tool_results_contain": [{"tool": "city_lookup", "needle": "2,102,650"}],
            # a tool the fixture scripts results for is offered, though no step calls it
            "tool_call_status": [{"tool": "city_lookup", "status": "succeeded"}],
            "response_contains": ["2,102,650"],
        },
    }
    status, document = report(tmp_path, config, lookup)
    assert (status, failed(document)) == (0, {})
    unused = {**lookup, "model_name": "unused"}
    unused["turns"] = [{**lookup["turns"][0], "steps": [text_step("Paris has 2,102,650 people.")]}]
    unused["expects"] = {"response_contains": ["2,102,650"]}
    status, document = report(tmp_path / "unused", config, unused)
    assert status == 1
    assert document["cases"][0]["error"] == (
        "case 'unused': after the last turn (turn 0): tool_results.city_lookup[0] left "
        "unused: the agent made 0 calls to 'city_lookup' of 1 scripted"
    )
    # The same fixture for an agent whose model's calls are the calls: refused.
    chat = served_config(tmp_path / "chat", "make_agent")
    refused = run(chat, write_suite(tmp_path / "chat-suite", unused), "--format", "json")
    assert refused.exit_code == 1
    assert "tool_results.city_lookup[0]: no scripted call reaches this result" in refused.stderr


def test_a_code_writing_agent_with_its_own_tools_refuses_what_reads_calls(
    tmp_path: Path,
) -> None:
    agent = "\n".join([factory("loop_agent:make_coder"), 'dialect = "smolagents-code"'])
    config = configure(tmp_path / "project", agent)
    result = run(config, write_suite(tmp_path / "suite", CODE_CASE))
    assert result.exit_code == 1
    assert (
        "expects.tool_sequence: agent 'factory loop_agent:make_coder' cannot certify "
        "this family: its model writes code that calls the agent's own tools, so no tool "
        "call crosses the wire"
    ) in result.stderr


def own_config(tmp_path: Path, spec: str, *extra: str) -> Path:
    return configure(tmp_path / "project", "\n".join([factory(f"loop_agent:{spec}"), *extra]))


def own_lookup(*answer: str) -> dict[str, Any]:
    """The lookup case for an agent with its own tools (nothing scripted but the model)."""
    case = {key: value for key, value in LOOKUP.items() if key != "tool_results"}
    if answer:
        case["turns"] = [dict(LOOKUP["turns"][0])]
        steps = case["turns"][0]["steps"]
        case["turns"][0]["steps"] = [
            steps[0],
            calls_step(("call_2", "final_answer", {"answer": answer[0]})),
        ]
    return case


def test_a_flattening_agent_with_its_own_tools_has_its_results_read_where_it_put_them(
    tmp_path: Path,
) -> None:
    config = own_config(tmp_path, "make_observing", SMOLAGENTS)
    status, document = report(tmp_path, config, own_lookup())
    assert failed(document) == {}
    assert status == 0
    checks = {c["check"]: c["detail"] for c in document["cases"][0]["checks"]}
    # The answer tool is the answer, not a call; the result is read out of the
    # "Observation:" message, its framing taken off.
    assert checks["exact_tool_calls: 1"] == "observed 1 call: city_lookup"
    # Read as tool messages, no result ever comes back.
    plain = own_config(tmp_path / "plain", "make_observing")
    status, document = report(tmp_path / "plain", plain, own_lookup())
    assert status == 1
    assert (
        "no result came back"
        in dict(failed(document)["lookup"])['tool_results_contain: city_lookup "2,102,650"']
    )


def test_eval_check_reads_the_answer_from_the_answer_tool(tmp_path: Path) -> None:
    from zeroclaw_eval.testing import run_cli

    config = own_config(tmp_path, "make_observing", SMOLAGENTS)
    suite = write_suite(tmp_path / "suite", own_lookup())
    checked = run_cli(["eval", "check", "--config", str(config), "--suite", str(suite)])
    assert (checked.exit_code, checked.stderr) == (0, "")
    wrong = write_suite(tmp_path / "wrong", own_lookup("I do not know."))
    checked = run_cli(["eval", "check", "--config", str(config), "--suite", str(wrong)])
    assert 'expects.response_contains[0]="2.1 million": the agent passes' in checked.stderr
    assert '"I do not know." lacks it: can never pass' in checked.stderr


def test_results_shown_together_cannot_be_tied_to_one_of_several_own_calls(
    tmp_path: Path,
) -> None:
    case = own_lookup()
    case["turns"] = [dict(case["turns"][0])]
    case["turns"][0]["steps"] = [
        calls_step(
            ("call_1", "city_lookup", {"city": "Paris"}), ("call_3", "echo", {"message": "x"})
        ),
        *case["turns"][0]["steps"][1:],
    ]
    case["expects"] = {**case["expects"], "exact_tool_calls": 2}
    result = run(
        own_config(tmp_path, "make_observing", SMOLAGENTS), write_suite(tmp_path / "s", case)
    )
    assert result.exit_code == 1
    assert (
        'expects.tool_results_contain[0].tool="city_lookup": agent \'factory '
        "loop_agent:make_observing' (dialect 'smolagents') shows the model the results of "
        "one step's calls together"
    ) in result.stderr


def test_an_in_process_agent_printing_to_stdout_leaves_the_json_report_whole(
    tmp_path: Path,
) -> None:
    from .conftest import zeroclaw

    config = own_config(tmp_path, "make_chatty")
    case = {
        "model_name": "chatty",
        "turns": [{"user_input": "Hi", "steps": [text_step("Hello")]}],
        "expects": {"response_contains": ["Hello"]},
    }
    suite = write_suite(tmp_path / "suite", case)
    result = zeroclaw("eval", "run", "--config", config, "--suite", suite, "--format", "json")
    assert json.loads(result.stdout)["all_passed"] is True, result.stdout
    assert "debug: turn 'Hi'" in result.stderr
    assert "debug from a child" in result.stderr
    assert result.returncode == 0


class NoteTool:
    """Writes its text into the running case's workspace, as a team's tool does."""

    name = "write_note"
    description = "Write a note."
    parameters: Mapping[str, Any] = MappingProxyType({"type": "object"})

    def run(self, arguments: dict[str, Any]) -> Any:
        from zeroclaw_eval import ToolResult, case_workspace

        note = case_workspace() / "note.txt"
        note.write_text(str(arguments["text"]), encoding="utf-8")
        return ToolResult(f"wrote {note.read_text(encoding='utf-8')!r}")


def test_a_served_tool_works_in_the_case_workspace(tmp_path: Path) -> None:
    from zeroclaw_eval import hookimpl
    from zeroclaw_eval.testing import run_cli

    class Notes:
        @hookimpl
        def zeroclaw_eval_register_tools(self, register: Any) -> None:
            register(NoteTool.name, NoteTool)

    case = {
        "model_name": "note",
        "turns": [
            {
                "user_input": "Note it",
                "steps": [calls_step(("call_1", "write_note", {"text": "milk"})), text_step("ok")],
            }
        ],
        "expects": {
            "tool_results_contain": [{"tool": "write_note", "needle": "wrote 'milk'"}],
            "all_tools_succeeded": True,
        },
    }
    config = served_config(tmp_path, "make_agent")
    suite = write_suite(tmp_path / "suite", case)
    args = ["eval", "run", "--config", str(config), "--suite", str(suite), "--format", "json"]
    result = run_cli(args, Notes())
    assert failed(json.loads(result.stdout)) == {}
    assert result.exit_code == 0


def test_a_served_agent_that_never_dispatches_a_scripted_tool_is_graded_for_it(
    tmp_path: Path,
) -> None:
    # The scripted result it never used is what the pairing finds, not a run error
    # that would hide every check of the case.
    weather = {
        "model_name": "weather",
        "tool_results": {"weather": [{"result": "Paris: 12 C, light rain"}]},
        "turns": [
            {
                "user_input": "Weather in Paris?",
                "steps": [
                    calls_step(("call_1", "weather", {"city": "Paris"})),
                    text_step("It rains in Paris."),
                ],
            }
        ],
        "expects": {"response_contains": ["rains"]},
    }
    config = configure(
        tmp_path / "project", factory("lazy_agent:make_agent") + '\ntools = "served"'
    )
    status, document = report(tmp_path, config, weather)
    assert status == 1
    [case] = document["cases"]
    assert case["error"] is None, case["error"]
    assert failed(document) == {
        "weather": [
            (
                "served_tools: requested calls dispatched",
                "turn 0: 'weather' call 'call_1' was never dispatched",
            )
        ]
    }


def test_the_offer_in_eval_takes_the_harness_s_echo_away_from_a_served_agent(
    tmp_path: Path,
) -> None:
    # A replay key: no [eval.live] table is needed to serve only the case's tools.
    config = served_config(tmp_path, "make_agent")
    config.write_text(
        config.read_text(encoding="utf-8").replace("[eval]\n", "[eval]\nallowed_tools = []\n", 1),
        encoding="utf-8",
    )
    case = {**TWO_CITIES, "expects": {"tools_offered": {"exactly": ["city_lookup"]}}}
    status, document = report(tmp_path, config, case)
    assert (status, failed(document)) == (0, {})
    served_everything = served_config(tmp_path / "all", "make_agent")
    status, document = report(tmp_path / "all", served_everything, case)
    assert status == 1
    [(check, detail)] = failed(document)["two-cities"]
    assert check.startswith("tools_offered") and "echo" in detail
