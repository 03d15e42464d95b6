"""What a fixture's script settles before anything runs, for the consistency pass of
``zeroclaw eval check``.

In replay, the model side is the script: the tool calls a run records are the
scripted ones, in order (the reference loop dispatches each, and a bridged
agent's are read from the wire as the bridge sent them), and an agent that
passes the model's text through (the reference loop) ends each turn with the
turn's last scripted text. A family compares its parameters with this and
reports the entries that can never pass (:meth:`~zeroclaw_eval.grading.family.Family.consistency`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from zeroclaw_eval.grading.record import RecordedCall, RunRecord
from zeroclaw_eval.report.model import plural


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call the script makes, in turn ``turn``, with ``arguments``; ``reply``
    counts the scripted replies across the run, so calls with one ``reply`` are asked
    for together.

    ``result`` is what the call returns when the fixture scripts it
    (``tool_results``: the tool never runs), ``failed`` whether that result is an
    error; ``None`` when the tool runs for real, and the script cannot say.
    """

    turn: int
    name: str
    reply: int = 0
    arguments: Mapping[str, Any] = field(default_factory=dict)
    result: str | None = None
    failed: bool = False


@dataclass(frozen=True)
class Script:
    """The script of a case, as the consistency pass reads it.

    ``calls`` are every scripted tool call in order across the turns; ``replies``
    every scripted text (the text replies and any text beside tool calls), in
    order; ``final_response`` the text the last turn ends with when the agent
    passes the model's text through unchanged (the reference loop), ``None`` when
    the agent may write its own.
    """

    calls: tuple[ScriptedCall, ...]
    replies: tuple[str, ...]
    final_response: str | None
    user_inputs: tuple[str, ...] = ()
    """The user input of each turn."""

    def played(self) -> RunRecord:
        """The run an agent that plays the script as written leaves: the scripted
        calls dispatched with their arguments, the final response (when the agent
        passes it through), the user inputs. A call whose tool runs for real
        (``result`` ``None``) is recorded with an empty, successful result: only a
        family that has checked the results it reads are scripted may trust them.
        """
        calls = [
            RecordedCall(
                call.turn,
                f"scripted-{number}",
                call.name,
                dict(call.arguments),
                call.result or "",
                not call.failed,
                call.reply,
            )
            for number, call in enumerate(self.calls)
        ]
        responses = [] if self.final_response is None else [self.final_response]
        return RunRecord(responses, calls, user_inputs=list(self.user_inputs))

    @property
    def tool_names(self) -> list[str]:
        """Names of the scripted calls, in order."""
        return [call.name for call in self.calls]

    def calls_to(self, tool: str) -> list[ScriptedCall]:
        """The scripted calls to ``tool``, in order: what ``call_index`` counts in."""
        return [call for call in self.calls if call.name == tool]


@dataclass(frozen=True)
class Finding:
    """An entry the script says can never pass (``error``), or likely will not
    (a warning). ``path`` is relative to the family's entry, as for a
    :class:`~zeroclaw_eval.grading.family.Problem`."""

    path: tuple[str | int, ...]
    message: str
    error: bool = True


@dataclass(frozen=True)
class ScriptedStep:
    """One scripted step as a mode that replays it serves it, for the replay rules of
    admission (:meth:`~zeroclaw_eval.grading.family.Family.replay_rules`).

    ``fault`` is the kind of fault it is (as
    :attr:`~zeroclaw_eval.protocol.ModelReply.fault` names it), or ``None``;
    ``retry_after`` an HTTP error's ``Retry-After`` seconds; ``calls`` the ids of
    the tool calls it hands the agent (none for a reply whose connection drops).
    """

    fault: str | None = None
    retry_after: int | None = None
    calls: tuple[str, ...] = ()


Steps = tuple[tuple[ScriptedStep, ...], ...]
"""Each turn's scripted steps, in order."""


class CallEntry(Protocol):
    """An entry about the calls to one tool, or the one at ``call_index``."""

    @property
    def tool(self) -> str: ...

    @property
    def call_index(self) -> int | None: ...


def calls_findings(entries: Sequence[CallEntry], script: Script) -> Iterator[Finding]:
    """What entries about the calls to a tool (or the one at ``call_index``) find in
    ``script``: a tool it never calls, or an index past its calls, can never pass.
    A finding points at the entry's ``tool`` or ``call_index``."""
    for index, entry in enumerate(entries):
        scripted = len(script.calls_to(entry.tool))
        if not scripted:
            yield Finding((index, "tool"), f"the script never calls {entry.tool!r}: can never pass")
        elif entry.call_index is not None and entry.call_index >= scripted:
            yield Finding(
                (index, "call_index"),
                f"the script calls {entry.tool!r} {plural(scripted, 'time')}: can never pass",
            )
