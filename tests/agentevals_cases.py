"""The trajectory-match cases of LangChain's agentevals, written out by hand from its
Python test suite (python/tests/test_trajectory.py, langchain-ai/agentevals at
946ad15b9f2ce9bc9843edd2bb773bd07d78ca7e), for tests/test_agentevals_parity.py.

Each ``PeerTest`` is one test function there: the output and reference trajectories
it builds (messages reduced to what its matcher reads: the role, each assistant
message's tool calls with their decoded arguments, the text of the others; the text
beside a reference's calls, and the ids, are left out), its
parameters with the score it asserts, and how its ``tool_args_match_overrides``
read here. Two of its tests also assert that the evaluator without overrides
scores the same trajectories false; those asserts are cases of their own.

The peer's matcher (python/agentevals/trajectory/), as this module reads it:
``strict`` walks both message lists side by side (same length, same roles, each
assistant message's calls paired one to one by name and arguments, first fit);
``superset`` pairs each reference call with a distinct output call (first fit);
``subset`` pairs each output call with a distinct reference call; ``unordered`` is
both. ``tool_args_match_mode`` compares the arguments: ``exact`` equal,
``superset`` the output's include the reference's, ``subset`` the other way,
``ignore`` always. An override replaces the mode for one tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]
Call = tuple[str, dict[str, Any]]
# How a reference call's arguments read as a step: the step's fields beside its tool.
StepFields = Callable[[dict[str, Any]], dict[str, Any]]


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def calls(*tool_calls: Call) -> Message:
    """An assistant message asking for ``tool_calls`` (one model reply)."""
    return {"role": "assistant", "tool_calls": list(tool_calls)}


def tool(text: str) -> Message:
    return {"role": "tool", "content": text}


def says(text: str) -> Message:
    """An assistant message with text and no tool calls."""
    return {"role": "assistant", "content": text}


@dataclass(frozen=True)
class Param:
    """One parametrization of a peer test: its pytest id, the modes and the score."""

    peer_id: str
    trajectory_mode: str
    args_mode: str
    score: bool
    # False for the evaluator the test builds without its overrides.
    overridden: bool = True


@dataclass(frozen=True)
class Override:
    """A ``tool_args_match_overrides`` entry and what says the same here."""

    # The override's value as the peer's test writes it: an argument mode, a list of
    # dotted keys, or a function of the output's and the reference's arguments.
    peer: str | list[str] | Callable[[dict[str, Any], dict[str, Any]], bool]
    step: StepFields  # the step's fields for a reference call's arguments


@dataclass(frozen=True)
class PeerTest:
    name: str
    outputs: list[Message]
    reference: list[Message]
    params: list[Param]
    overrides: dict[str, Override] = field(default_factory=dict)


MODES = ("unordered", "superset", "subset", "strict")


def by_mode(*scores: float | bool) -> list[Param]:
    """The four-mode parametrization most tests use, with its feedback key in the id:
    ``scores`` in the order unordered, superset, subset, strict."""
    return [
        Param(f"trajectory_{mode}_match-{mode}" + _score_id(score), mode, "exact", bool(score))
        for mode, score in zip(MODES, scores, strict=True)
    ]


def _score_id(score: float | bool) -> str:
    # The tests parametrized with a score show it in the id as written (1.0, 0.0).
    return f"-{score}" if isinstance(score, float) else ""


def all_modes(score: bool) -> list[Param]:
    """The four-mode parametrization of a test that asserts one score for every mode."""
    return [Param(f"trajectory_{mode}_match-{mode}", mode, "exact", score) for mode in MODES]


def override_params(*scores: bool, peer_score_in_id: bool) -> list[Param]:
    """A test parametrized by ``trajectory_match_mode`` alone, run with its overrides
    (``scores`` in the order unordered, superset, subset, strict) and, as it asserts
    first, without them (always false)."""
    ids = [
        f"{mode}-{score}" if peer_score_in_id else mode
        for mode, score in zip(MODES, scores, strict=True)
    ]
    with_overrides = [
        Param(peer_id, mode, "exact", score)
        for peer_id, mode, score in zip(ids, MODES, scores, strict=True)
    ]
    without = [
        Param(f"{peer_id}/no_overrides", mode, "exact", False, overridden=False)
        for peer_id, mode in zip(ids, MODES, strict=True)
    ]
    return with_overrides + without


def args_modes(exact: bool, ignore: bool, subset: bool, superset: bool) -> list[Param]:
    """A ``tool_args_match_mode`` parametrization, in the default ``strict`` mode."""
    scores = {"exact": exact, "ignore": ignore, "subset": subset, "superset": superset}
    return [Param(f"{mode}-{score}", "strict", mode, score) for mode, score in scores.items()]


# --- the overrides, each read declaratively ----------------------------------------

IGNORE_WEATHER = Override("ignore", lambda _: {})


def _sf_either_way(args: dict[str, Any]) -> dict[str, Any]:
    """The lambda's reference half holds for every reference this test has (its
    "San Francisco"); its output half reads only `city`, so the call may have other
    keys: a partial match with the one matcher."""
    if args.get("city") not in ("SF", "San Francisco"):
        raise AssertionError(f"the override would fail every call for a reference {args}")
    return {"arguments": {"city": {"$one_of": ["SF", "San Francisco"]}}, "match": "partial"}


SF_EITHER_WAY = Override(
    lambda x, y: (
        (x["city"] == "SF" or x["city"] == "San Francisco")
        and (y["city"] == "SF" or y["city"] == "San Francisco")
    ),
    _sf_either_way,
)


def _policy_query(args: dict[str, Any]) -> dict[str, Any]:
    """``lookup_policy_query_matcher``: a reference query with "upgrade" in it needs an
    output query with "upgrade" in it (only `query` is read); any other matches. That
    is how the peer calls it in strict and superset; in subset, and in the second
    pass of unordered, it passes the two the other way round (the flaw
    tests/test_agentevals_parity.py DERIVED shows for the argument modes), which
    decides none of these cases: each fails there on a call no step can take."""
    if "upgrade" in args.get("query", ""):
        return {"arguments": {"query": {"$contains": "upgrade"}}, "match": "partial"}
    return {}


def lookup_policy_query_matcher(
    tool_args: dict[str, Any], reference_tool_args: dict[str, Any]
) -> bool:
    """The peer test's own override, as it is written there."""
    if reference_tool_args.get("query", {}) and "upgrade" in reference_tool_args.get("query", {}):
        return "upgrade" in tool_args.get("query", {})
    # Ignore for other policy query matches
    return True


POLICY_QUERY = Override(lookup_policy_query_matcher, _policy_query)

# Only `time.start` compared: the value at that pointer, nothing else. (The peer also
# takes a missing key for a null on both sides; no case reaches that.)
TIME_START = Override(
    ["time.start"],
    lambda args: {"arguments": args, "match": "paths", "paths": ["/time/start"]},
)


# --- the tests ------------------------------------------------------------------------

SF_WEATHER = "What is the weather in SF?"
SF_LONDON = "What is the weather in SF and London?"
FLIGHT_TIME = "Hi there, what time is my flight?"
UPGRADE = (
    "Update it to the next flight after that and bump me to first class if there is availability."
)
FLIGHT_SAID = (
    "Your flight LX0112 from CDG to BSL is scheduled to depart in an hour and arrive in two hours."
)
NO_UPGRADES = (
    "Upgrades to first class are not currently available as they are being saved for VIPs."
)
NEXT_FLIGHT = (
    "The next flight after that is LX0112 from CDG to BSL is in 4 hours. However, we do not "
    "currently allow upgrades to first class. Confirming that I should book it for you anyway?"
)
UPGRADES_POSSIBLE = (
    "Ok, it looks like upgrades to first class are possible. "
    "What date would you like to change your flight to?"
)
SF_80 = "It's 80 degrees and sunny in SF."
LONDON_90 = "It's 90 degrees and rainy in London."
BOTH_SAID = "The weather in SF is 80 degrees and sunny. In London, it's 90 degrees and rainy."
BOTH_SAID_REF = "The weather in London is 90˚ and rainy. In SF, it's 80˚ and sunny."


def _ticket(departure: str, arrival: str) -> dict[str, Any]:
    return {
        "ticket_no": "7240005432906569",
        "book_ref": "C46E9F",
        "flight_id": 19250,
        "flight_no": "LX0112",
        "departure_airport": "CDG",
        "arrival_airport": "BSL",
        "scheduled_departure": departure,
        "scheduled_arrival": arrival,
        "seat_no": "18E",
        "fare_conditions": "Economy",
    }


TICKET = json.dumps([_ticket("2025-03-22T18:34:40Z", "2025-03-22T20:34:40Z")])
TICKET_REF = json.dumps([_ticket("2025-03-20T15:00:00-07:00", "2025-03-20T16:00:00-07:00")])
FLIGHTS_FOUND = json.dumps(
    [
        {
            "flight_id": flight_id,
            "flight_no": "LX0112",
            "scheduled_departure": departure,
            "scheduled_arrival": arrival,
            "departure_airport": "CDG",
            "arrival_airport": "BSL",
            "status": "Scheduled",
            "aircraft_code": "SU9",
        }
        for flight_id, departure, arrival in (
            (19229, "2025-03-22T19:34:40Z", "2025-03-22T21:34:40Z"),
            (19232, "2025-03-22T20:34:40Z", "2025-03-22T22:34:40Z"),
        )
    ]
)
WINDOW = {"start": "2025-03-22T18:34:40Z", "end": "2025-03-22T20:34:40Z"}
REF_WINDOW = {"start": "2025-03-22T18:34:40Z", "end": "baz"}

# The trajectories the peer's tests write more than once, each written once here.
SF_ASKED = [  # the output of four tests
    user(SF_WEATHER),
    calls(("get_weather", {"city": "SF"})),
    tool(SF_80),
    says("The weather in SF is 80 degrees and sunny."),
]


def sf_reference(name: str) -> list[Message]:
    """The reference of four tests: one call of ``name`` for San Francisco."""
    return [
        user(SF_WEATHER),
        calls((name, {"city": "San Francisco"})),
        tool("It's 80 degrees and sunny in San Francisco."),
        says("The weather in SF is 80˚ and sunny."),
    ]


def sf_london(reply: list[Call], results: tuple[str, ...], said: str) -> list[Message]:
    """A trajectory of the SF and London question in one reply: its calls, their tool
    messages, the text."""
    return [user(SF_LONDON), calls(*reply), *map(tool, results), says(said)]


def weather(city: str) -> Call:
    return ("get_weather", {"city": city})


LONDON_THEN_SF = sf_london(
    [weather("London"), weather("SF")], results=(LONDON_90, SF_80), said=BOTH_SAID_REF
)
SF_AND_LONDON_AS_ONE = sf_london(
    [weather("SF and London")],
    results=("It's 80 degrees and sunny in SF, and 90 degrees and rainy in London.",),
    said=BOTH_SAID,
)
SAN_FRANCISCO_AND_LONDON = sf_london(
    [weather("San Francisco"), weather("London")],
    results=("It's 80 degrees and sunny in San Francisco.", LONDON_90),
    said="The weather in SF is 80˚ and sunny. In London, it's 90˚ and rainy.",
)


def flight_info(args: dict[str, Any]) -> list[Message]:
    """The trajectory of the tool_args_match_mode tests: one call, no tool message."""
    return [
        user(FLIGHT_TIME),
        calls(("get_flight_info", args)),
        says("Your flight is at 10:00 AM."),
    ]


def flight_turns(
    fetched: dict[str, Any], ticket: str, *second: Message, said: str
) -> list[Message]:
    """The two turns of the flight tests: the ticket fetched, then the upgrade asked."""
    return [
        user(FLIGHT_TIME),
        calls(("fetch_user_flight_information", fetched)),
        tool(ticket),
        says(FLIGHT_SAID),
        user(UPGRADE),
        *second,
        says(said),
    ]


def policy(query: str, **more: Any) -> Call:
    return ("lookup_policy", {"query": query, **more})


PEER_TESTS: list[PeerTest] = [
    PeerTest(
        "test_trajectory_match",
        [
            user(SF_WEATHER),
            calls(weather("San Francisco")),
            tool(SF_80),
            says("The weather in SF is 80 degrees and sunny."),
        ],
        sf_reference("get_weather"),
        all_modes(True),
    ),
    PeerTest(
        "test_trajectory_with_different_tool_message_order",
        sf_london([weather("SF"), weather("London")], results=(SF_80, LONDON_90), said=BOTH_SAID),
        LONDON_THEN_SF,
        all_modes(True),
    ),
    PeerTest(
        "test_trajectory_with_different_message_count",
        [
            user(SF_LONDON),
            calls(weather("SF")),
            tool(SF_80),
            calls(weather("London")),
            tool(LONDON_90),
            says(BOTH_SAID),
        ],
        LONDON_THEN_SF,
        by_mode(1.0, 1.0, 1.0, 0.0),
    ),
    PeerTest(
        "test_trajectory_subset_tool_call",
        sf_london(
            [weather("SF")],
            results=(SF_80,),
            said="The weather in SF is 80 degrees and sunny. "
            "In London, it's 9000 degrees and hallucinating.",
        ),
        # Its reference repeats London's tool message, as the peer's test writes it.
        sf_london(
            [weather("London"), weather("SF")], results=(LONDON_90, LONDON_90), said=BOTH_SAID_REF
        ),
        by_mode(0.0, 0.0, 1.0, 0.0),
    ),
    PeerTest(
        "test_exact_matcher_with_different_called_tools",
        SF_ASKED,
        sf_reference("accuweather_forecast"),
        all_modes(False),
    ),
    PeerTest(
        "test_trajectory_with_extra_tool_calls_and_override",
        SAN_FRANCISCO_AND_LONDON,
        SF_AND_LONDON_AS_ONE,
        by_mode(0.0, 1.0, 0.0, 0.0),
        {"get_weather": IGNORE_WEATHER},
    ),
    PeerTest(
        "test_trajectory_with_subset_tool_calls_and_override",
        SF_AND_LONDON_AS_ONE,
        SAN_FRANCISCO_AND_LONDON,
        by_mode(0.0, 0.0, 1.0, 0.0),
        {"get_weather": IGNORE_WEATHER},
    ),
    PeerTest(
        "test_trajectory_match_with_langchain_messages_and_override",
        SF_ASKED,
        sf_reference("get_weather"),
        all_modes(True),
        {"get_weather": SF_EITHER_WAY},
    ),
    PeerTest(
        "test_trajectory_match_with_langchain_messages_failure",
        SF_ASKED,
        sf_reference("accuweather_forecast"),
        all_modes(False),
    ),
    PeerTest(
        "test_trajectory_match_with_overrides",
        flight_turns(
            {},
            TICKET,
            calls(
                (
                    "search_flights",
                    {
                        "start_time": "2025-03-22T18:34:40Z",
                        "departure_airport": "CDG",
                        "arrival_airport": "BSL",
                    },
                )
            ),
            tool(FLIGHTS_FOUND),
            calls(policy("flight upgrades"), policy("first class")),
            tool(NO_UPGRADES),
            tool(NO_UPGRADES),
            said=NEXT_FLIGHT,
        ),
        flight_turns(
            {},
            TICKET_REF,
            calls(policy("upgrade to first class"), policy("foo")),
            tool("..."),
            tool("..."),
            said=UPGRADES_POSSIBLE,
        ),
        override_params(False, True, False, False, peer_score_in_id=True),
        {"lookup_policy": POLICY_QUERY},
    ),
    PeerTest(
        "test_trajectory_match_with_nested_field_overrides",
        flight_turns(
            {"user_id": "123"},
            TICKET,
            calls(policy("flight upgrades", time=WINDOW), policy("first class", time=WINDOW)),
            tool(NO_UPGRADES),
            tool(NO_UPGRADES),
            said=NEXT_FLIGHT,
        ),
        flight_turns(
            {"user_id": "123"},
            TICKET_REF,
            calls(policy("foo", time=REF_WINDOW), policy("bar", time=REF_WINDOW)),
            tool("..."),
            tool("..."),
            said=UPGRADES_POSSIBLE,
        ),
        override_params(True, True, True, True, peer_score_in_id=False),
        {"lookup_policy": TIME_START},
    ),
    PeerTest(
        "test_tool_args_match_mode_superset",
        flight_info({"is_cool": True, "flight_no": "LX0112"}),
        flight_info({"flight_no": "LX0112"}),
        args_modes(exact=False, ignore=True, subset=False, superset=True),
    ),
    PeerTest(
        "test_tool_args_match_mode_subset",
        flight_info({"flight_no": "LX0112"}),
        flight_info({"flight_no": "LX0112", "foo": "bar"}),
        args_modes(exact=False, ignore=True, subset=True, superset=False),
    ),
    PeerTest(
        "test_tool_args_match_mode_exact",
        flight_info({"flight_no": "LX0112"}),
        flight_info({"flight_no": "LX0112"}),
        args_modes(exact=True, ignore=True, subset=True, superset=True),
    ),
]
