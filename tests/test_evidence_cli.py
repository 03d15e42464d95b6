"""The evidence families through real ``zeroclaw`` runs: the shipped regression cases
pass with the reference agent, and the same cases go red for an agent that lies (an
invented booking reference, a claim whose call never ran, a value that never
reached the next call); admission and ``eval check`` refuse what a script settles
or can never satisfy, in one line each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .cli_process import assert_clean_errors, json_report
from .conftest import PROJECT, zeroclaw_all

REGRESSION = PROJECT / "evals" / "regression"
GROUNDED = "answer_grounded_in_tool_results.json"
FLOW = "data_flow_between_calls.json"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REGRESSION / name).read_text(encoding="utf-8"))
    return data


def steps(data: dict[str, Any], turn: int = 0) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data["turns"][turn]["steps"]
    return found


def write(directory: Path, name: str, data: dict[str, Any]) -> None:
    directory.mkdir(exist_ok=True)
    (directory / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def lying_variants(suite: Path) -> None:
    """The shipped cases as an agent that lies would play them."""
    invented = load(GROUNDED)
    final = steps(invented)[2]["response"]
    final["content"] = final["content"].replace("booking BK-482913", "booking BK-482914")
    write(suite, "invented_id.json", invented)

    unbacked = load(GROUNDED)
    # The confirming call goes to a tool that does not exist: it fails, and the
    # answer still says "confirmed".
    steps(unbacked)[1]["response"]["tool_calls"][0]["name"] = "confirm_booking"
    del unbacked["expects"]["all_tools_succeeded"]
    write(suite, "unbacked_claim.json", unbacked)

    diverted = load(FLOW)
    steps(diverted, 1)[1]["response"]["tool_calls"][0]["arguments"]["message"] = "ord_7f3b"
    diverted["turns"][1]["steps"][2]["response"]["content"] = "Paid order ord_7f3a."
    write(suite, "diverted_value.json", diverted)


def test_shipped_cases_pass_and_lying_variants_fail(tmp_path: Path) -> None:
    shipped, lying = tmp_path / "shipped", tmp_path / "lying"
    for name in (GROUNDED, FLOW):
        write(shipped, name, load(name))
    lying_variants(lying)
    runs = zeroclaw_all(
        {
            name: (["eval", "run", "--suite", suite, "--format", "json", "--no-history"], None)
            for name, suite in (("shipped", shipped), ("lying", lying))
        }
    )

    passed = json_report(runs["shipped"])
    assert runs["shipped"].returncode == 0, runs["shipped"].stderr
    details = {c["check"]: c["detail"] for case in passed["cases"] for c in case["checks"]}
    # The user's input reaches grading from the run itself, not from the model.
    assert (
        "number 4471 in the user input of turn 0"
        in details["response_grounded: id, number, amount, url"]
    )

    report = json_report(runs["lying"])
    assert runs["lying"].returncode == 1
    failed = {
        case["source"].rsplit("/", 1)[-1]: [
            (check["check"], check["detail"]) for check in case["checks"] if not check["passed"]
        ]
        for case in report["cases"]
    }
    assert failed == {
        "diverted_value.json": [
            (
                "tool_data_flow: echo /order/id -> echo /message",
                "no call to echo was given a value a call to echo returned before it; tried 2 "
                'pairings, nearest: echo[0] (turn 0, call 0) /order/id "ord_7f3a" -> echo[2] '
                '(turn 1, call 2) /message "ord_7f3b"',
            )
        ],
        "invented_id.json": [
            (
                "response_grounded: id, number, amount, url",
                "1 value of 6 in no tool result nor user input: id BK-482914 (nearest: "
                '"BK-482913" in echo[0] (turn 0, call 0))',
            )
        ],
        "unbacked_claim.json": [
            (
                'response_claims_backed: \'confirmed\' needs echo {"message":{"$regex":"^confirm '
                'BK-\\\\d+$"}}',
                "the final response claims 'confirmed', but no call to echo has the arguments: "
                "nearest echo[0] (turn 0, call 0), arguments differ: /message: expected a "
                'string matching /^confirm BK-\\d+$/, got "{\\"booking\\": \\"BK-482913\\", '
                '\\"party\\": 2, \\"total\\": 12...',
            )
        ],
    }


def scripted(name: str, results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    data = load(name)
    data["tool_results"] = results
    return data


def test_admission_and_check_refuse_what_the_script_settles(tmp_path: Path) -> None:
    booking = steps(load(GROUNDED))[0]["response"]["tool_calls"][0]["arguments"]["message"]
    # Every result scripted: the reference agent's run is the script's.
    settled = scripted(GROUNDED, {"echo": [{"result": booking}, {"result": "confirmed"}]})
    write(tmp_path / "settled", GROUNDED, settled)
    never = scripted(
        FLOW, {"echo": [{"result": '{"id": "ord_7f3a"}'}, {"result": "x"}, {"result": "y"}]}
    )
    del never["expects"]["response_grounded"]  # ord_7f3a is in that result: settled
    write(tmp_path / "never", FLOW, never)
    ungrounded = scripted(GROUNDED, {"echo": [{"result": "BK-000001"}, {"result": "ok"}]})
    del ungrounded["expects"]["response_claims_backed"]  # the scripted success settles it
    write(tmp_path / "never", GROUNDED, ungrounded)
    offer = load(GROUNDED)
    offer["expects"]["response_claims_backed"][0]["tool"] = "refund"
    write(tmp_path / "offer", GROUNDED, offer)
    runs = zeroclaw_all(
        {
            "settled": (["eval", "run", "--suite", tmp_path / "settled", "--no-history"], None),
            "never": (["eval", "check", "--suite", tmp_path / "never"], None),
            "offer": (["eval", "run", "--suite", tmp_path / "offer", "--no-history"], None),
        }
    )

    assert runs["settled"].returncode == 1
    (line,) = [line for line in assert_clean_errors(runs["settled"].stderr) if GROUNDED in line]
    assert line.endswith(
        f"{tmp_path / 'settled' / GROUNDED}: expects.response_grounded: cannot fail for agent "
        "'reference', which plays the script as written: the scripted answer is grounded by "
        "the fixture itself: 5 values grounded: id BK-482913 in echo[0] (turn 0, call 0); "
        "number 4471 in the user input of turn 0; number 129.50 in echo[0] (turn 0, call 0); "
        "amount $129.50 in echo[0] (turn 0, call 0); url https://example.com/bookings/BK-482913 "
        "in echo[0] (turn 0, call 0)"
    )

    assert runs["never"].returncode == 1
    errors = [line for line in runs["never"].stderr.splitlines() if line.startswith("Error: ")]
    assert errors == [
        f"Error: {tmp_path / 'never' / GROUNDED}: expects.response_grounded: no scripted result "
        "nor user input grounds the scripted answer: 4 values of 5 in no tool result nor user "
        "input: id BK-482913 (nothing like it in the sources); number 129.50 (nearest: 000001 "
        "in echo[0] (turn 0, call 0)); amount $129.50 (nearest: 000001 in echo[0] (turn 0, "
        "call 0)); url https://example.com/bookings/BK-482913 (nothing like it in the "
        "sources): can never pass",
        f"Error: {tmp_path / 'never' / FLOW}: expects.tool_data_flow[0]: no echo result holds a "
        'value at /order/id: echo[0] (turn 0, call 0) returned {"id":"ord_7f3a"}, with nothing '
        'there; echo[1] (turn 1, call 1) returned text that is not JSON: "x"; echo[2] (turn 1, '
        'call 2) returned text that is not JSON: "y": can never pass',
    ]

    assert runs["offer"].returncode == 1
    assert (
        f'{tmp_path / "offer" / GROUNDED}: expects.response_claims_backed[0].tool="refund": '
        "names no tool the agent is offered"
    ) in runs["offer"].stderr
    assert "Traceback" not in runs["offer"].stderr
