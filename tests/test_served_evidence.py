"""Boundary evidence for agents that talk in different ways, served their tools over MCP.

``tests/agents/loop_agent.py`` is an honest agent loop on raw HTTP that can talk
as most frameworks do (a ``role: "tool"`` message per result) or as smolagents
does (results flattened into a user message, the answer given through its own
``final_answer`` tool), and whose broken factories lie, pad or cut a result.
Each runs through the CLI in this process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
                    {"tool": "city_lookup", "arguments": {"city": "Paris-2"}},
                    {"tool": "city_lookup", "arguments": {"city": "Paris-1"}},
                ],
            }
        ],
        "tool_results_contain": [
            {"tool": "city_lookup", "needle": "Paris-2 has another", "call_index": 0},
            {"tool": "city_lookup", "needle": "Paris-1 has one", "call_index": 1},
        ],
    },
}


def test_a_scripted_result_goes_to_the_call_that_asked_for_it_in_any_order(
    tmp_path: Path,
) -> None:
    # The agent dispatches the step's calls in reverse order, as a framework running
    # them concurrently may: each city still gets its own scripted result.
    status, document = report(tmp_path, served_config(tmp_path, "make_reversing"), TWO_CITIES)
    assert failed(document) == {}
    assert status == 0
