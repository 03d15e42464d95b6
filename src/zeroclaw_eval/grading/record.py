"""What a run leaves behind: the final responses, every dispatched tool call, and
every request the model side answered.

The list of recorded calls is the one canonical dispatch fact. Tool names, counts
and overall success are derived from it on demand, never stored beside it, so a
richer record can never disagree with a summary of itself. The model requests are
kept as the agent sent them (a copy of the message list, the tools themselves);
their normalised form (:meth:`ModelRequest.normalised`) is built only when a
family, a report or the drift check reads it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.util.frozen import quick_frozen

if TYPE_CHECKING:
    from zeroclaw_eval.grading.accounting import Prices
    from zeroclaw_eval.protocol import Message, ModelReply, Tool, Usage
    from zeroclaw_eval.report.model import CheckResult


# json.dumps(..., ensure_ascii=False) builds an encoder on every call; argument
# needles read every call's arguments as text.
_encode = json.JSONEncoder(ensure_ascii=False).encode


@quick_frozen
class RecordedCall:
    """One tool call as it crossed the dispatch boundary.

    ``arguments`` are what the agent passed to the tool; ``result`` is the text the
    tool returned, or for a failed call its error text (which names the tool).
    ``response`` is which model reply asked for the call: the index, across the run,
    of the request that reply answered (``requests[response]`` where the agent
    records its requests); ``None`` where nothing ties the call to a reply (a
    served tool called with no model call asking for it). Calls with one
    ``response`` are the batch the model asked for at once.
    """

    turn: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str
    succeeded: bool
    response: int | None = None

    @property
    def arguments_json(self) -> str:
        """The arguments as JSON text, non-ASCII kept as is: what needles are matched against."""
        return _encode(self.arguments)


@quick_frozen
class ModelRequest:
    """One request the model side answered, as the agent sent it.

    ``turn`` and ``step`` (both 0-based) say which scripted step answered it in
    replay: the ``step``-th request of turn ``turn``. ``messages`` are in the
    chat-completions shape whatever the wire (roles, text, assistant ``tool_calls``
    with their ids and JSON-string ``arguments``, ``role: "tool"`` results with
    their ``tool_call_id``); ``tools`` what was offered (each has ``name``,
    ``description``, ``parameters``); ``settings`` the request's other fields
    (``tool_choice``, ``temperature``, ``max_tokens``, ``model``...; empty for the
    reference loop, which sends none). ``api`` names the wire it came over
    (``chat.completions``, ``responses``, ``anthropic.messages``), or
    ``in-process`` for an agent that called the provider directly.

    What the model side answered, as far as recovery is graded: ``fault``, the
    kind of scripted fault it answered with (``http_error``, ``dropped``,
    ``length``, ``invalid_arguments``), ``retry_after`` the seconds an HTTP
    error's ``Retry-After`` asked for, ``calls_sent`` the ids of the tool calls
    its reply handed the agent (none when the reply never arrived whole),
    ``received`` when the request arrived and ``replied`` when a fault's answer was
    ready (both ``time.monotonic()``; ``replied`` is kept for faults only).
    ``traceparent`` is the W3C trace context the request carried over the wire (its
    ``traceparent`` header), when the agent's own instrumentation sent one: a traced
    run nests its span of the request under the agent's that made it.
    """

    turn: int
    step: int
    messages: Sequence[Message]
    tools: Sequence[Tool]
    settings: Mapping[str, Any] = field(default_factory=dict)
    api: str = "in-process"
    received: float = 0.0
    fault: str | None = None
    retry_after: float | None = None
    calls_sent: tuple[str, ...] = ()
    replied: float = 0.0
    traceparent: str | None = None

    @property
    def tool_names(self) -> list[str]:
        """Names of the offered tools, in the order offered."""
        return [tool.name for tool in self.tools]

    def texts(self, role: str | None = None) -> list[str]:
        """Every text the model was shown, in order: message contents (of ``role``
        only, when given), and for ``role`` ``None`` or ``assistant`` the
        arguments of the assistant's tool calls."""
        found: list[str] = []
        for message in self.messages:
            if role is not None and message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                found.append(content)
            for call in message.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
                    found.append(function["arguments"])
        return found

    def answered(self, reply: ModelReply) -> ModelRequest:
        """This request with what ``reply`` says of the answer (see the class); itself
        when there is nothing to keep (a text reply that is no fault)."""
        fault = reply.fault
        if fault is None and not reply.tool_calls:
            return self
        error = reply.error
        # Built whole, not by dataclasses.replace: this runs for every tool-call reply.
        return ModelRequest(
            self.turn,
            self.step,
            self.messages,
            self.tools,
            self.settings,
            self.api,
            self.received,
            fault,
            None if error is None else error.retry_after,
            () if reply.dropped else tuple(call.call_id for call in reply.tool_calls),
            0.0 if fault is None else time.monotonic(),
            self.traceparent,
        )

    def normalised(self) -> dict[str, Any]:
        """The request as a recording stores it and drift compares it: volatile
        fields masked (see :mod:`zeroclaw_eval.grading.requests`)."""
        from zeroclaw_eval.grading.requests import normalise

        return normalise(self)


@quick_frozen
class RequestUsage:
    """What the model side reported for one request: ``usage`` (``None``: nothing)
    and the model it said answered (``None``: it did not say). ``turn`` and ``step``
    are 0-based, as :class:`~zeroclaw_eval.grading.record.ModelRequest` counts them."""

    turn: int
    step: int
    model: str | None
    usage: Usage | None

    @property
    def where(self) -> str:
        """How a check names the request: ``turn 0 request 1``."""
        return f"turn {self.turn} request {self.step}"


@dataclass
class RunRecord:
    """Everything grading may look at after one case ran.

    ``responses`` holds the agent's final text for each turn that completed, in
    order; ``calls`` every dispatched tool call in dispatch order across all turns (those
    of one model reply that an agent ran side by side in the order asked);
    ``requests`` every model request the agent made, in order (empty for an agent
    that records none: a third-party agent session may leave it so); ``usage`` what
    the model side reported for each reply, in the same order (a request whose reply
    never came has none). ``rates`` prices the usage (``[eval.rates]``) and
    ``requested_model`` is the model the mode asked for, the rate of a reply that
    names none: both set by the runner before grading
    (:mod:`zeroclaw_eval.grading.accounting`). ``user_inputs`` the user input the
    harness gave the agent for each turn it started, in order (the runner fills it,
    whatever the agent: what a value in the answer may have come from besides a tool).
    """

    responses: list[str] = field(default_factory=list)
    calls: list[RecordedCall] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    requests: list[ModelRequest] = field(default_factory=list)
    usage: list[RequestUsage] = field(default_factory=list)
    rates: Mapping[str, Prices] = field(default_factory=dict)
    requested_model: str | None = None
    user_inputs: list[str] = field(default_factory=list)

    @property
    def final_response(self) -> str | None:
        """The agent's text for the last turn, or ``None`` if no turn completed."""
        return self.responses[-1] if self.responses else None

    @property
    def tool_names(self) -> list[str]:
        """Names of the dispatched calls, in dispatch order (derived)."""
        return [call.name for call in self.calls]

    @property
    def all_succeeded(self) -> bool:
        """Whether every dispatched call succeeded (derived; true for no calls)."""
        return all(call.succeeded for call in self.calls)

    def calls_to(self, tool: str) -> list[RecordedCall]:
        """The calls to ``tool``, in dispatch order: what ``call_index`` counts in."""
        return [call for call in self.calls if call.name == tool]

    def requests_at(self, turn: int | None = None, step: int | None = None) -> list[ModelRequest]:
        """The model requests of turn ``turn`` (every turn when ``None``), and of its
        ``step``-th request only when ``step`` is given, in order."""
        return [
            request
            for request in self.requests
            if (turn is None or request.turn == turn) and (step is None or request.step == step)
        ]

    def certified_checks(self) -> tuple[CheckResult, ...]:
        """Checks the run itself brings, graded beside the fixture's expectations.

        None by default; an agent that sees both sides of a boundary (the tools it
        was served over MCP, and the model's side) brings the checks that the two
        agree (:mod:`zeroclaw_eval.agents.served`).
        """
        return ()

    def certified_notes(self) -> tuple[str, ...]:
        """What the run itself says the report should show beside its checks, without
        failing the case: a check it brings that does not apply to this agent, and why.
        None by default."""
        return ()


def empty_run() -> RunRecord:
    """A run that produced nothing: no response, no calls, no tokens.

    Grading a case against it finds the vacuous ones: a case that certifies a
    behaviour must fail at least one check here.
    """
    return RunRecord()
