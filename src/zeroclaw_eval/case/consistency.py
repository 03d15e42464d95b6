"""The consistency pass of ``zeroclaw eval check``: fixtures whose script can never
satisfy their expectations.

Beside the empty-run vacuity check (:func:`~zeroclaw_eval.case.suite.vacuity`),
each family compares its parameters with what the script settles
(:class:`~zeroclaw_eval.grading.script.Script`): a count bound the scripted calls
cannot meet, a ``tools_used`` or boundary entry naming a tool the script never
calls, a response needle the scripted final text lacks when the agent passes it
through. Errors are entries that can never pass; warnings, entries that pass
only if the agent writes something the script does not (an agent that rewrites
the model's text). Only scripts that replay (every turn has steps) are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.case.fixture import (
    HttpErrorResponse,
    LlmTrace,
    TextResponse,
    ToolCallsResponse,
)
from zeroclaw_eval.grading.script import Script, ScriptedCall
from zeroclaw_eval.util.wording import dotted, shown

if TYPE_CHECKING:
    # Only a type here: admission reads the script too (Family.settled), so a
    # runtime import of it would be a cycle.
    from zeroclaw_eval.case.admission import Case


@dataclass(frozen=True)
class Inconsistency:
    """One entry of a case its script contradicts: where (``expects.tools_used[0]``), why,
    and whether it can never pass (``error``) or likely will not (a warning)."""

    source: str
    field: str
    message: str
    error: bool

    def __str__(self) -> str:
        return f"{self.source}: {self.field}: {self.message}"


def script_of(
    trace: LlmTrace, passes_replies_through: bool, dialect: Dialect = CHAT
) -> Script | None:
    """What the trace's script settles, or ``None`` when a turn has no steps, or when
    the agent's model writes code (``dialect``): its calls are not in the script.

    A call to the dialect's answer tool is the turn's answer, not a call: the answer
    the agent gives, whatever ``passes_replies_through`` says. A call to a tool the
    fixture scripts results for (``tool_results``) carries its result, taken in
    call order as the run takes them."""
    if not dialect.model_calls:
        return None
    scripted = {tool: iter(results) for tool, results in (trace.tool_results or {}).items()}
    calls: list[ScriptedCall] = []
    replies: list[str] = []
    final: str | None = None
    answered = False
    replied = 0
    for index, turn in enumerate(trace.turns):
        if not turn.steps:
            return None
        for step in turn.steps:
            response = step.response
            replied += 1
            if isinstance(response, HttpErrorResponse):
                final, answered = None, False  # a turn it ends, the agent words
            elif isinstance(response, ToolCallsResponse) and response.dropped:
                continue  # never reached the agent whole: none of its calls is made
            elif isinstance(response, ToolCallsResponse):
                for call in response.tool_calls:
                    if call.name != dialect.answer_tool:
                        given = next(scripted.get(call.name, iter(())), None)
                        calls.append(
                            ScriptedCall(index, call.name, replied - 1, call.arguments)
                            if given is None
                            else ScriptedCall(
                                index,
                                call.name,
                                replied - 1,
                                call.arguments,
                                given.result,
                                given.error,
                            )
                        )
                        continue
                    answer = call.arguments.get(dialect.answer_argument or "")
                    final, answered = (answer, True) if isinstance(answer, str) else (None, False)
                    if final is not None:
                        replies.append(final)
                if response.content:
                    replies.append(response.content)
            elif isinstance(response, TextResponse):
                # As the reference loop reads a text reply: a refusal with no content
                # is the answer.
                final = response.content or response.refusal or ""
                answered = False
                replies.append(final)
                if response.finish == "length":
                    final = None  # what the agent makes of a cut text is its own
    passed_through = passes_replies_through or answered
    return Script(
        tuple(calls),
        tuple(replies),
        final if passed_through else None,
        tuple(turn.user_input for turn in trace.turns),
    )


def inconsistencies(
    case: Case, passes_replies_through: bool, dialect: Dialect = CHAT
) -> list[Inconsistency]:
    """Every entry of ``case`` its script contradicts, in declaration order, for an
    agent that talks ``dialect``."""
    script = script_of(case.trace, passes_replies_through, dialect)
    if script is None:
        return []
    found: list[Inconsistency] = []
    for expectation in case.expectations:
        try:
            findings = list(expectation.family.consistency(expectation.params, script))
        except Exception as exc:  # a plugin's bug is reported, never a pass
            found.append(
                Inconsistency(
                    case.source,
                    dotted(("expects", expectation.name)),
                    f"family {expectation.name!r} of plugin {expectation.plugin!r} failed "
                    f"comparing with the script: {type(exc).__name__}: {exc}",
                    True,
                )
            )
            continue
        found.extend(
            Inconsistency(
                case.source,
                _field(case.trace.expects, (expectation.name, *finding.path)),
                finding.message,
                finding.error,
            )
            for finding in findings
        )
    return found


def _field(expects: Any, path: tuple[str | int, ...]) -> str:
    """``expects.tools_used[1]="shell"``: the path, and the value there when it can be
    shown, as admission names a field."""
    value = expects
    for part in path:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            value = None
    field = dotted(("expects", *path))
    text = shown(value) if value is not None else None
    return f"{field}={text}" if text is not None else field
