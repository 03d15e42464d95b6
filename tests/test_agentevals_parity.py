"""Parity with LangChain's agentevals: every trajectory-match case of its own test suite
(tests/agentevals_cases.py), written as a fixture of this harness and run through the
real CLI, must get the verdict the peer's test asserts.

A case becomes a fixture so: the peer's *output* trajectory is the script (each user
message a turn, each assistant message with tool calls one model reply asking for
them in order, its tool messages the scripted results, the final text the last
reply); its *reference* trajectory and modes become one ``tool_sequence`` entry:

- ``strict`` -> ``exact``, each reference reply of two or more calls a ``batch`` (the
  peer's strict compares how the calls are grouped into messages);
- ``unordered`` -> ``unordered``; ``superset`` (the output may have more calls) ->
  ``calls_include``;
- ``subset`` (the output's calls are only among the reference's) -> ``calls_only_among``
  with every step optional, beside ``min_tool_calls: 1``. The peer's subset passes a
  run that calls no tool, as its README has it ("did not call any tools beyond the
  expected ones" holds for none): not a flaw by its own documentation, but read
  literally a gate that cannot fail, which admission refuses
  (``test_the_literal_subset_translations_are_refused_as_vacuous``, for every subset
  case). The floor cannot change a verdict here: every output of the peer's tests
  calls a tool (pinned too);
- ``tool_args_match_mode`` ``exact`` / ``superset`` / ``subset`` / ``ignore`` -> ``match``
  ``exact`` / ``partial`` / ``subset`` / no arguments; an override -> the matchers,
  ``paths`` or ``ignore`` that say the same (tests/agentevals_cases.py, beside each).

The peer's verdict is the score its test asserts; a port of its matcher
(tests/agentevals_peer.py) checks that the hand-written trajectories give that score,
and traces its verdict on the variants of DERIVED, which show the flaws of its matcher
that its own suite never reaches, and of GAPS, where it is right and no fixture here
can say what it checks. All the fixtures run in one ``zeroclaw eval run``
(and the refused literal ones in one more, side by side).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from .agentevals_cases import PEER_TESTS, Message, Param, PeerTest, calls
from .agentevals_peer import peer_verdict
from .cli_process import json_report
from .conftest import zeroclaw_all

# The result a call gets when the peer's trajectory has no tool message for it (the
# tool_args_match_mode tests go from the call straight to the answer); the verdict
# never reads it.
NO_TOOL_MESSAGE = "(no tool message in the peer's trajectory)"

# Cases the peer's test gets wrong by the peer's own documentation: none. Its suite
# never puts the flaws of its matcher in front of a verdict: DERIVED shows each flaw
# on a variant of one of its cases, outside its suite.
EXCLUDED: dict[str, str] = {}

# Cases no fixture here can say: none, since the argument matchers, ``ignore``/``paths``,
# the subset direction, batches and the floor of ``calls_only_among`` landed.
UNEXPRESSIBLE: dict[str, str] = {}


@dataclass(frozen=True)
class Derived:
    """A variant of a peer case on which the peer's matcher (tests/agentevals_peer.py)
    departs from its README or passes a run a gate must fail, with the peer's verdict
    (``param.score``, the other one here) and why."""

    test: PeerTest
    param: Param
    reason: str


def _peer_test(name: str) -> PeerTest:
    (test,) = [t for t in PEER_TESTS if t.name == name]
    return test


def _reference_order_swapped() -> PeerTest:
    test = _peer_test("test_trajectory_match_with_overrides")
    reference = list(test.reference)
    (index,) = [i for i, m in enumerate(reference) if len(m.get("tool_calls", [])) == 2]
    reference[index] = calls(*reversed(reference[index]["tool_calls"]))
    return replace(test, reference=reference)


def _true_for_one() -> PeerTest:
    test = _peer_test("test_tool_args_match_mode_exact")
    outputs = [
        m
        if "tool_calls" not in m
        else calls(("get_flight_info", {"flight_no": "LX0112", "is_cool": 1}))
        for m in test.outputs
    ]
    reference = [
        m
        if "tool_calls" not in m
        else calls(("get_flight_info", {"flight_no": "LX0112", "is_cool": True}))
        for m in test.reference
    ]
    return replace(test, outputs=outputs, reference=reference)


def _calls_nothing() -> PeerTest:
    test = _peer_test("test_trajectory_subset_tool_call")
    return replace(
        test,
        outputs=[
            m for m in test.outputs if m["role"] in ("user", "assistant") and "tool_calls" not in m
        ],
    )


DERIVED = {
    "test_trajectory_subset_tool_call[trajectory_subset_match-subset-1.0]~calls_nothing": Derived(
        _calls_nothing(),
        Param("trajectory_subset_match-subset-1.0", "subset", "exact", True),
        "vacuous pass: the peer's subset passes an output that calls no tool at all. Its "
        "README allows it ('did not call any tools beyond the expected ones' holds for "
        "none), so this is no flaw by its documentation, but a gate that cannot fail: here "
        "the literal translation is refused and the case with its floor fails the run",
    ),
    "test_trajectory_match_with_overrides[superset-True]~reference_order_swapped": Derived(
        _reference_order_swapped(),
        Param("superset-True", "superset", "exact", False),
        "first-fit pairing flips with the order of the reference: the 'foo' reference call, "
        "which its override matches with any query, takes the 'flight upgrades' call the "
        "'upgrade to first class' one needs, and the peer fails a trajectory it passes with "
        "the reference in the other order; its README's superset ('a trajectory contains a "
        "superset of tool calls contained in a reference trajectory') has no order",
    ),
    "test_tool_args_match_mode_superset[superset-True]~unordered": Derived(
        _peer_test("test_tool_args_match_mode_superset"),
        Param("superset-True", "unordered", "superset", False),
        "the argument direction turns round: unordered runs the superset pairing both ways "
        "with one matcher, so tool_args_match_mode superset also demands the reference's "
        "arguments include the output's, and a call with one key more fails, though its "
        "README says superset treats it as equivalent and unordered asks for the same tool "
        "calls in any order",
    ),
    "test_tool_args_match_mode_exact[exact-True]~true_for_1": Derived(
        _true_for_one(),
        Param("exact-True", "strict", "exact", True),
        "True == 1: the arguments are compared as Python values, so is_cool 1 equals the "
        "reference's true, though its README requires by default 'that all tool call "
        "arguments are the exact same' and JSON tells true from 1",
    ),
}


def _two_replies_asked_as_one() -> PeerTest:
    """The output of test_trajectory_with_different_tool_message_order (SF and London in
    one reply) against the output of test_trajectory_with_different_message_count as
    the reference (SF, then London, a reply each)."""
    one_reply = _peer_test("test_trajectory_with_different_tool_message_order")
    two_replies = _peer_test("test_trajectory_with_different_message_count")
    return replace(two_replies, outputs=one_reply.outputs, reference=two_replies.outputs)


# Variants on which the peer is right and no fixture here can say what it checks: a
# gap of this harness, pinned so that it shows when it closes.
GAPS = {
    "test_trajectory_with_different_message_count[trajectory_strict_match-strict-0.0]"
    "~two_replies_asked_as_one": Derived(
        _two_replies_asked_as_one(),
        Param("trajectory_strict_match-strict-0.0", "strict", "exact", False),
        "a call alone in its reply: the peer's strict fails calls asked for together where "
        "the reference asks for them one reply each, as its README says ('the same messages "
        "in the same order'); exact here keeps only the order of steps outside a batch, and "
        "admission refuses a batch of one step, so nothing says 'SF in a reply of its own'",
    ),
}

VACUITY = re.compile(
    r"expects\.tool_sequence\[0\]\.steps: every step is optional: calls_only_among is then "
    r"satisfied by a run that calls no tool, and nothing else in the case needs a call"
)


def case_id(test: PeerTest, param: Param) -> str:
    """The case's origin: the peer's test and its pytest parameter id."""
    return f"{test.name}[{param.peer_id}]"


def file_name(identifier: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", identifier) + ".json"


def script(outputs: list[Message]) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """The turns and scripted tool results that replay the peer's output trajectory."""
    turns: list[dict[str, Any]] = []
    results: dict[str, list[dict[str, str]]] = {}
    waiting: list[str] = []  # the tools of the last reply still owed a tool message
    for message in outputs:
        if message["role"] == "tool":
            results.setdefault(waiting.pop(0), []).append({"result": message["content"]})
            continue
        for name in waiting:
            results.setdefault(name, []).append({"result": NO_TOOL_MESSAGE})
        waiting = []
        if message["role"] == "user":
            turns.append({"user_input": message["content"], "steps": []})
        elif "tool_calls" in message:
            reply = [
                {
                    "id": f"call_{len(turns)}_{len(turns[-1]['steps'])}_{n}",
                    "name": name,
                    "arguments": args,
                }
                for n, (name, args) in enumerate(message["tool_calls"])
            ]
            turns[-1]["steps"].append({"response": {"type": "tool_calls", "tool_calls": reply}})
            waiting = [name for name, _ in message["tool_calls"]]
        else:
            turns[-1]["steps"].append({"response": {"type": "text", "content": message["content"]}})
    assert not waiting, "an output trajectory ends on a tool call"
    return turns, results


def step_fields(test: PeerTest, param: Param, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """How one reference call's arguments are compared: the override for its tool when the
    evaluator has one, else the ``tool_args_match_mode``."""
    if param.overridden and name in test.overrides:
        return test.overrides[name].step(args)
    match = {"exact": "exact", "superset": "partial", "subset": "subset"}.get(param.args_mode)
    return {} if match is None else {"arguments": args, "match": match}


SEQUENCE_MODE = {
    "strict": "exact",
    "unordered": "unordered",
    "superset": "calls_include",
    "subset": "calls_only_among",
}


def expectation(test: PeerTest, param: Param, floor: bool = True) -> dict[str, Any]:
    """The ``expects`` of a case: its reference trajectory as one ``tool_sequence`` entry."""
    replies = [m["tool_calls"] for m in test.reference if "tool_calls" in m]
    steps = []
    for number, reply in enumerate(replies):
        for name, args in reply:
            step = {"tool": name, **step_fields(test, param, name, args)}
            if param.trajectory_mode == "strict" and len(reply) > 1:
                step["batch"] = number
            if param.trajectory_mode == "subset":
                step["optional"] = True
            steps.append(step)
    expects: dict[str, Any] = {
        "tool_sequence": [{"mode": SEQUENCE_MODE[param.trajectory_mode], "steps": steps}]
    }
    if param.trajectory_mode == "subset" and floor:
        expects["min_tool_calls"] = 1
    return expects


def fixture(identifier: str, test: PeerTest, param: Param, floor: bool = True) -> dict[str, Any]:
    turns, results = script(test.outputs)
    expects = expectation(test, param, floor)
    called = {
        call["name"]
        for turn in turns
        for s in turn["steps"]
        for call in s["response"].get("tool_calls", [])
    }
    # A tool only the reference calls is one the agent was offered and did not use.
    unused = {s["tool"] for s in expects["tool_sequence"][0]["steps"]} - called
    case: dict[str, Any] = {"model_name": identifier, "turns": turns, "expects": expects}
    if results:
        case["tool_results"] = results
    if unused:
        case["tool_definitions"] = {
            name: {
                "description": "A tool of the peer's reference trajectory.",
                "input_schema": {"type": "object"},
            }
            for name in sorted(unused)
        }
    return case


CASES = {case_id(t, p): (t, p) for t in PEER_TESTS for p in t.params}
CONVERTED = {i: tp for i, tp in CASES.items() if i not in EXCLUDED and i not in UNEXPRESSIBLE}
SUBSET = {i: tp for i, tp in CONVERTED.items() if tp[1].trajectory_mode == "subset"}
# What the CLI runs, admitted: the converted cases and the variants of DERIVED and GAPS.
RUN = {**CONVERTED, **{i: (d.test, d.param) for i, d in {**DERIVED, **GAPS}.items()}}


def runs(root: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """One CLI run over every converted case, and one over the literal subset ones."""
    converted, literal = root / "converted", root / "literal_subset"
    for directory, cases, floor in ((converted, RUN, True), (literal, SUBSET, False)):
        directory.mkdir()
        for identifier, (test, param) in cases.items():
            text = json.dumps(fixture(identifier, test, param, floor), ensure_ascii=False, indent=1)
            (directory / file_name(identifier)).write_text(text, encoding="utf-8")
    run = ("eval", "run", "--format", "json", "--no-history", "--suite")
    return zeroclaw_all(
        {"converted": ([*run, converted], None), "literal": ([*run, literal], None)}
    )


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    return runs(tmp_path_factory.mktemp("agentevals"))


@pytest.fixture(scope="module")
def verdicts(cli: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, dict[str, Any]]:
    """Each converted case's report entry, by case id."""
    report = json_report(cli["converted"])
    assert report["errors"] == [], report["errors"]
    return {case["name"]: case for case in report["cases"]}


def test_the_counts_of_converted_excluded_and_unexpressible_cases() -> None:
    """The peer's 14 trajectory-match tests: 56 parametrizations, and 8 asserts more of
    the evaluator without overrides in the two override tests."""
    assert len(PEER_TESTS) == 14
    assert len(CASES) == 64
    assert Counter(p.overridden for _, p in CASES.values()) == {True: 56, False: 8}
    assert (len(CONVERTED), len(EXCLUDED), len(UNEXPRESSIBLE)) == (64, 0, 0)
    assert Counter(p.score for _, p in CONVERTED.values()) == {True: 31, False: 33}
    # The 13 subset cases run with a floor; read literally, each is refused as vacuous.
    assert len(SUBSET) == 13
    # One variant a flaw of the peer's matcher: first fit, the argument direction in
    # unordered, True == 1, the pass of a run calling nothing.
    assert len(DERIVED) == 4
    assert len(GAPS) == 1


def test_every_case_is_admitted_and_run(verdicts: dict[str, dict[str, Any]]) -> None:
    assert sorted(verdicts) == sorted(RUN)
    assert all(case["ran"] and case["error"] is None for case in verdicts.values())


@pytest.mark.parametrize("identifier", sorted(CONVERTED))
def test_each_case_gets_the_peers_verdict(
    identifier: str, verdicts: dict[str, dict[str, Any]]
) -> None:
    _, param = CONVERTED[identifier]
    case = verdicts[identifier]
    (sequence,) = [c for c in case["checks"] if c["check"].startswith("tool_sequence: ")]
    assert sequence["passed"] is param.score, sequence["detail"]
    # The floor of a subset case never decides it: every peer output calls a tool.
    assert all(c["passed"] for c in case["checks"] if c is not sequence)
    assert case["passed"] is param.score


@pytest.mark.parametrize("identifier", sorted(SUBSET))
def test_the_literal_subset_translations_are_refused_as_vacuous(
    identifier: str, cli: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    """Without the floor, ``calls_only_among`` with only optional steps passes a run that
    calls nothing, as the peer's subset does; admission refuses it, naming the key."""
    report = json_report(cli["literal"])
    assert cli["literal"].returncode != 0
    assert report["cases"] == []
    refusals = [e for e in report["errors"] if f"/{file_name(identifier)}: " in e]
    assert len(refusals) == 1, report["errors"]
    assert VACUITY.search(refusals[0]), refusals[0]


def test_the_transcription_gives_the_scores_the_peers_tests_assert() -> None:
    """The peer's own matcher, ported, scores each hand-written case as its test says."""
    assert {i: peer_verdict(t, p) for i, (t, p) in CASES.items()} == {
        i: p.score for i, (t, p) in CASES.items()
    }


@pytest.mark.parametrize("identifier", sorted(DERIVED))
def test_each_flaw_of_the_peers_matcher_shows_on_a_variant_of_its_cases(
    identifier: str, verdicts: dict[str, dict[str, Any]]
) -> None:
    """Each flaw the issue names shows on a variant of a peer case: the peer's matcher
    gives the verdict DERIVED says, this harness the other one."""
    derived = DERIVED[identifier]
    assert peer_verdict(derived.test, derived.param) is derived.param.score
    assert verdicts[identifier]["passed"] is not derived.param.score, verdicts[identifier]["checks"]
    # The case it varies is in the suite, converted, with the verdict both agree on.
    origin = identifier.split("~")[0]
    assert origin in CONVERTED
    assert peer_verdict(*CONVERTED[origin]) is CONVERTED[origin][1].score


@pytest.mark.parametrize("identifier", sorted(GAPS))
def test_a_gap_where_the_peer_is_right_and_no_fixture_can_say_it(
    identifier: str, verdicts: dict[str, dict[str, Any]]
) -> None:
    """The peer's verdict is the one its README gives; the nearest fixture here (each
    reference reply of two or more calls a batch) gives the other."""
    gap = GAPS[identifier]
    assert peer_verdict(gap.test, gap.param) is gap.param.score
    assert verdicts[identifier]["passed"] is not gap.param.score, verdicts[identifier]["checks"]
