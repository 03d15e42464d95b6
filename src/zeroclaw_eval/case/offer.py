"""One tool offer: the tools a case's agent is offered, the same in replay and live.

The offer is ``[eval] allowed_tools`` (or, in its older place, ``[eval.live]
allowed_tools``) when it is set, else every registered tool, whatever the mode.
So a fixture cannot replay green calling a tool that the live agent would never
have been offered, and a recording replays with the tools it was recorded with.

Admission holds scripted steps to it (:func:`check_offer`): a scripted call to a
registered tool left out of the offer is refused, naming the step, since the
fixture scripts a call the agent could not make. A name that no plugin
registers is left alone: a model asking for a tool that does not exist is a
behaviour worth a case (the agent records a failed call), and it fails the
same way in both modes.

Expectations are held to it too: a tool an entry names (a family's
``tools_named``) must fit an offered tool, one the fixture defines or scripts
results for, or one the script calls, or the entry could only pass on a call
the agent was never given.

This covers the harness's own agent and tools; an agent that brings its own
tools makes its own offer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, TypeVar

from zeroclaw_eval.case.fixture import ToolCallsResponse
from zeroclaw_eval.errors import AdmissionError, ConfigError
from zeroclaw_eval.util.wording import dotted, shown

if TYPE_CHECKING:
    from zeroclaw_eval.case.admission import Case
    from zeroclaw_eval.config import EvalConfig

T = TypeVar("T")


def offered_names(config: EvalConfig, registered: Iterable[str]) -> frozenset[str]:
    """The names of the tools offered to each case's agent under ``config``."""
    allowed = config.offer
    return frozenset(registered if allowed is None else allowed)


def select(available: Mapping[str, T], config: EvalConfig) -> dict[str, T]:
    """The offered part of ``available`` (tool name -> tool), in registration order."""
    offered = offered_names(config, available)
    return {name: tool for name, tool in available.items() if name in offered}


def check_allowed(config: EvalConfig, registered: Iterable[str]) -> None:
    """Refuse an ``allowed_tools`` entry that no plugin registers. Raises :class:`ConfigError`."""
    known = set(registered)
    for tool in config.offer or ():
        if tool not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ConfigError(
                f"{config.offer_key}: {tool!r} is not a registered tool (registered: {listed})"
            )


def check_offer(
    case: Case, offered: frozenset[str], registered: Iterable[str], key: str = "eval.allowed_tools"
) -> None:
    """Refuse a case whose scripted step calls a registered tool outside ``offered``,
    or whose expectation names a tool that fits neither ``offered`` nor a scripted call.
    ``key`` is the setting the offer comes from, as the messages name it.

    Raises :class:`AdmissionError` naming the step (or the entry) and the tool.
    """
    known = set(registered)
    for name in case.trace.tool_results or ():
        if name in known and name not in offered:
            listed = ", ".join(sorted(offered)) or "none"
            raise AdmissionError(
                case.source,
                dotted(("tool_results", name)),
                f"scripts results for {name!r}, which is registered but not offered to "
                f"the agent ({key}: {listed})",
            )
    scripted: set[str] = set()
    for t, turn in enumerate(case.trace.turns):
        for s, step in enumerate(turn.steps or ()):
            response = step.response
            if not isinstance(response, ToolCallsResponse):
                continue
            for c, call in enumerate(response.tool_calls):
                scripted.add(call.name)
                if call.name in known and call.name not in offered:
                    path = ("turns", t, "steps", s, "response", "tool_calls", c, "name")
                    listed = ", ".join(sorted(offered)) or "none"
                    raise AdmissionError(
                        case.source,
                        f"{dotted(path)}={shown(call.name)}",
                        f"step {s} of turn {t} calls {call.name!r}, which is registered but "
                        f"not offered to the agent ({key}: {listed})",
                    )
    # A tool the fixture defines (tool_definitions) or scripts results for is offered
    # to the agent too, whether or not a step calls it.
    defined = {*(case.trace.tool_definitions or ()), *(case.trace.tool_results or ())}
    callable_names = offered | scripted | defined
    for expectation in case.expectations:
        for reference in expectation.family.tools_named(expectation.params):
            if not any(reference.accepts(name) for name in callable_names):
                where = ("expects", expectation.name, *reference.path)
                listed = ", ".join(sorted(offered)) or "none"
                raise AdmissionError(
                    case.source,
                    f"{dotted(where)}={shown(reference.written)}",
                    f"names no tool the agent is offered ({listed}) nor one the script "
                    "calls: only a call the agent was never given could pass it",
                )
