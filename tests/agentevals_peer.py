"""The verdict LangChain's agentevals gives a case of tests/agentevals_cases.py: a line
by line port of its trajectory matcher (python/agentevals/trajectory/strict.py,
utils.py ``_is_trajectory_superset``, ``_get_matcher_for_tool_name`` and the argument
modes; unordered.py and subset.py call the superset one in both or the other
direction), on the reduced messages of that module.

tests/test_agentevals_parity.py uses it twice: to check that the hand-written
trajectories give the score the peer's test asserts (a transcription slip shows up
as a disagreement), and to trace the peer's verdict on variants of its cases that
show where its matcher departs from its README.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from .agentevals_cases import Message, Param, PeerTest

Args = dict[str, Any]
Matcher = Callable[[Args, Args], bool]


def _exact(tool_call: Args, reference: Args) -> bool:
    return tool_call == reference


def _subset(tool_call: Args, reference: Args) -> bool:
    return all(key in reference and reference[key] == value for key, value in tool_call.items())


def _superset(tool_call: Args, reference: Args) -> bool:
    return all(key in tool_call and tool_call[key] == value for key, value in reference.items())


def _ignore(tool_call: Args, reference: Args) -> bool:
    return True


ARGS_MODES: dict[str, Matcher] = {
    "exact": _exact,
    "subset": _subset,
    "superset": _superset,
    "ignore": _ignore,
}


def _on_keys(keys: list[str]) -> Matcher:
    def nested(d: Any, key_path: str) -> Any:
        current = d
        for part in key_path.split("."):
            if not isinstance(current, dict):
                return None
            current = current.get(part)
            if current is None:
                return None
        return current

    return lambda out, ref: all(nested(out, key) == nested(ref, key) for key in keys)


def matcher_for(test: PeerTest, param: Param, name: str) -> Matcher:
    """``_get_matcher_for_tool_name``: the override for the tool, else the mode's."""
    override = test.overrides.get(name) if param.overridden else None
    if override is None:
        return ARGS_MODES[param.args_mode]
    if isinstance(override.peer, str):
        return ARGS_MODES[override.peer]
    if isinstance(override.peer, list):
        return _on_keys(override.peer)
    return override.peer


def _calls(messages: list[Message]) -> list[tuple[str, Args]]:
    return [call for message in messages for call in message.get("tool_calls", [])]


def _take_first(
    pool: list[tuple[str, Args]], taken: set[int], name: str, fits: Callable[[Args], bool]
) -> bool:
    """The peer's first fit: take the first call of ``pool`` not yet taken with this name
    and arguments that fit."""
    for index, (candidate, args) in enumerate(pool):
        if candidate == name and index not in taken and fits(args):
            taken.add(index)
            return True
    return False


def is_superset(
    outputs: list[Message], reference: list[Message], matcher: Callable[[str], Matcher]
) -> bool:
    """``_is_trajectory_superset``: each reference call, in order, takes the first
    output call not yet taken with its name and matching arguments."""
    output_calls, taken = _calls(outputs), set[int]()
    for name, ref_args in _calls(reference):
        if not _take_first(output_calls, taken, name, _against(matcher(name), ref_args)):
            return False
    return True


def _against(matcher: Matcher, reference: Args) -> Callable[[Args], bool]:
    """The output's arguments fit when the matcher takes them with the reference's."""
    return lambda output: matcher(output, reference)


def is_strict(
    outputs: list[Message], reference: list[Message], matcher: Callable[[str], Matcher]
) -> bool:
    """strict.py ``_scorer``: the messages side by side, the calls of each assistant
    message paired first fit."""
    if len(outputs) != len(reference):
        return False
    for output, ref in zip(outputs, reference, strict=True):
        if output["role"] != ref["role"] or ("tool_calls" in output) != ("tool_calls" in ref):
            return False
        if "tool_calls" not in output:
            continue
        if len(output["tool_calls"]) != len(ref["tool_calls"]):
            return False
        seen: set[int] = set()
        for name, out_args in output["tool_calls"]:
            fits = partial(matcher(name), out_args)
            if not _take_first(ref["tool_calls"], seen, name, fits):
                return False
    return True


def peer_verdict(test: PeerTest, param: Param) -> bool:
    """The score ``create_trajectory_match_evaluator`` gives the case."""

    def matcher(name: str) -> Matcher:
        return matcher_for(test, param, name)

    outputs, reference = test.outputs, test.reference
    if param.trajectory_mode == "strict":
        return is_strict(outputs, reference, matcher)
    if param.trajectory_mode == "superset":
        return is_superset(outputs, reference, matcher)
    if param.trajectory_mode == "subset":
        return is_superset(reference, outputs, matcher)
    return is_superset(outputs, reference, matcher) and is_superset(reference, outputs, matcher)
