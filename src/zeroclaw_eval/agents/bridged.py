"""Agents reached through the loopback model bridge: what every attachment shares.

A bridged agent is a team's own agent, unmodified: it talks to "the model" over
HTTP (the OpenAI chat-completions API), and the bridge answers each of its
requests from the case's mode provider (replay: the scripted steps; live: the
configured endpoint). Each case attempt gets its own bridge route and key.

Its evidence is what crossed the wire (:mod:`zeroclaw_eval.agents.wire`). What
never crosses it cannot be certified: a tool's own success flag, and the
arguments the agent really passed its tool, so ``all_tools_succeeded``,
``tool_call_status`` and ``tool_arguments_contain`` are refused at admission for
a bridged agent whose tools are its own. One that takes the case's tools over MCP
(``[eval.agent] tools = "served"``, :mod:`zeroclaw_eval.agents.served`) is seen
on both sides, and graded on what it dispatched. A failure on
the route (the agent asked for more responses than scripted, sent a malformed
request...) is the case's run error, whatever the agent made of the refusal.

The two attachments: :mod:`zeroclaw_eval.agents.factory` (Python, in-process) and
:mod:`zeroclaw_eval.agents.command` (any language, one process per case).
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.agents.base import AgentSession, AgentUnderTest, ModelSide
from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.agents.served import ServedTools
from zeroclaw_eval.agents.wire import Exchange, calls_from_wire, wire_calls
from zeroclaw_eval.config import AgentTable, EvalConfig
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.grading.record import ModelRequest, RequestUsage, RunRecord
from zeroclaw_eval.modes.base import StepsLeftUnused
from zeroclaw_eval.protocol import ModelReply, ToolResult
from zeroclaw_eval.report.model import plural

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import Route
    from zeroclaw_eval.bridge.wire import BridgeRequest
    from zeroclaw_eval.case.fixture import LlmTrace

#: Why a bridged agent with tools of its own cannot certify a tool's success
#: (``all_tools_succeeded``, ``tool_call_status``).
UNOBSERVABLE_SUCCESS = (
    "a bridged agent runs its tools itself, and a tool's own success never crosses the "
    "wire (only its result text does): grade that text with tool_results_contain, or "
    'serve the agent the case\'s tools over MCP ([eval.agent] tools = "served")'
)

#: Why a bridged agent with tools of its own cannot certify the arguments it dispatched
#: (``tool_arguments_contain``, a ``tool_sequence`` step that compares arguments).
UNOBSERVABLE_ARGUMENTS = (
    "a bridged agent runs its tools itself, so the harness sees only the arguments the "
    "script sent it, never those the agent dispatched: the check could not fail; serve "
    'the agent the case\'s tools over MCP ([eval.agent] tools = "served") to grade them'
)

#: Why an agent whose model writes code, with tools of its own, certifies no call.
UNOBSERVABLE_CODE_CALLS = (
    "its model writes code that calls the agent's own tools, so no tool call crosses the "
    "wire and the harness sees none: serve the agent the case's tools over MCP "
    '([eval.agent] tools = "served") to grade its calls'
)

#: Why an agent that flattens a step's results into one text never shows which call a
#: result answers (``tool_calls_answered``).
UNOBSERVABLE_ANSWERS = (
    "it shows the model the results of a step's calls together, in one text tied to no "
    "call id, so the wire never says which call a result answers"
)

#: Why an agent that flattens a step's results into one text cannot tie a result to
#: one of several calls of that step to its own tools.
UNTIED_RESULTS = (
    "shows the model the results of one step's calls together, in one text, so a "
    "result cannot be tied to one call of a step that makes several: script the calls "
    "in steps of their own, or serve the agent the case's tools over MCP ([eval.agent] "
    'tools = "served")'
)


@dataclass
class OfferedTool:
    """A tool as the agent offered it to the model (the request's ``tools`` entry).

    The live mode passes it on to the real model; the harness never runs it: the
    agent dispatches its own tools.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        raise RunError(
            f"tool {self.name!r} belongs to the bridged agent; the harness never runs it"
        )


def offered_tools(entries: Sequence[Mapping[str, Any]]) -> list[OfferedTool]:
    """The request's ``tools`` entries that describe a function, as tools."""
    offered = []
    for entry in entries:
        function = entry.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            description = function.get("description")
            parameters = function.get("parameters")
            offered.append(
                OfferedTool(
                    function["name"],
                    description if isinstance(description, str) else "",
                    parameters if isinstance(parameters, Mapping) else {},
                )
            )
    return offered


#: Request fields that are not settings: the conversation and the tools (kept on
#: their own), and how the reply travels (streaming, a stored response's id), which
#: changes nothing the model is asked.
NOT_SETTINGS = frozenset(
    {
        "messages",
        "input",
        "instructions",
        "system",
        "tools",
        "stream",
        "stream_options",
        "previous_response_id",
    }
)


def request_settings(body: Mapping[str, Any]) -> dict[str, Any]:
    """The request's settings: every field of its body but the conversation, the
    tools and the transport (:data:`NOT_SETTINGS`)."""
    return {key: value for key, value in body.items() if key not in NOT_SETTINGS}


class BridgedAgent(AgentUnderTest):
    """An agent the harness reaches only through the model bridge.

    The two attachments of ``[eval.agent]`` are bridged agents; a plugin can
    register one of its own by name: subclass this and :class:`BridgedSession`.
    """

    needs_bridge = True
    own_tools = True

    def __init__(self, table: AgentTable | None = None, dialect: Dialect = CHAT) -> None:
        self.table = table
        #: How the agent talks to its model: how its calls and results are read.
        self.dialect = dialect
        if table is not None and table.tools == "served":
            # The harness's tools, under its tool offer, on the MCP tool server.
            self.own_tools = False
            self.serves_tools = True

    @property
    def model_calls(self) -> bool:  # type: ignore[override]  # the dialect's, read only
        return self.dialect.model_calls

    @property
    def unobservable(self) -> Mapping[str, str]:
        # Served its tools, the agent is seen on both sides: everything rests on the
        # dispatches. With tools of its own, only what crosses the model's wire.
        missing: dict[str, str] = {}
        if self.dialect.flattens:  # whichever side runs the tools
            missing["answers"] = f"dialect {self.dialect.name!r}: {UNOBSERVABLE_ANSWERS}"
        if self.serves_tools:
            return MappingProxyType(missing)
        if not self.dialect.model_calls:
            missing.update(
                dict.fromkeys(("calls", "arguments", "results", "status"), UNOBSERVABLE_CODE_CALLS)
            )
            return MappingProxyType(missing)
        missing.update({"arguments": UNOBSERVABLE_ARGUMENTS, "status": UNOBSERVABLE_SUCCESS})
        return MappingProxyType(missing)

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        yield from super().admit(trace)
        if not self.serves_tools and self.dialect.flattens:
            yield from self._untied_results(trace)

    def _untied_results(self, trace: LlmTrace) -> Iterable[Problem]:
        """A result needle on a tool the script calls beside another call in one step:
        this agent shows the step's results together, so the needle could be met by the
        other call's result."""
        shared: set[str] = set()
        for turn in trace.turns:
            for step in turn.steps or ():
                names = [
                    call.name
                    for call in getattr(step.response, "tool_calls", ())
                    if call.name != self.dialect.answer_tool
                ]
                if len(names) > 1:
                    shared.update(names)
        entries = trace.expects.get("tool_results_contain")
        for index, entry in enumerate(entries if isinstance(entries, list) else ()):
            if isinstance(entry, Mapping) and entry.get("tool") in shared:
                yield Problem(
                    ("expects", "tool_results_contain", index, "tool"),
                    f"agent {self.label!r} (dialect {self.dialect.name!r}) {UNTIED_RESULTS}",
                )

    def steps_left_unused(self, error: RunError) -> RunError:
        if not isinstance(error, StepsLeftUnused):
            return error
        return RunError(
            f"turn {error.turn}, step {error.step}: the agent ended the turn without asking "
            f"the model again ({plural(error.count, 'scripted step')} left unused): it "
            "answered without sending the model what the script expects next"
        )

    def concurrency(self, config: EvalConfig) -> int | None:
        return self.table.max_concurrency if self.table is not None else None

    @property
    def run_name(self) -> str:
        if self.table is None:
            return self.name
        return f"{self.name}:{self.table.attached}"


class BridgedSession(AgentSession):
    """One case attempt of a bridged agent: its route, and the evidence that crossed it.

    Subclasses start the agent (after this opens the route), hand it each turn in
    :meth:`exchange_turn`, may check how it ended in :meth:`finish`, and let it go
    in :meth:`release`.
    """

    def __init__(
        self, side: ModelSide, *, serve_tools: bool = False, dialect: Dialect = CHAT
    ) -> None:
        if side.bridge is None:
            raise RunError("a bridged agent needs the model bridge, and the run started none")
        self._dialect = dialect
        self._provider = side.provider
        self._turn = 0
        self._step = 0
        self._requests: list[ModelRequest] = []
        self._exchanges: list[Exchange] = []
        self._usage: list[RequestUsage] = []
        self._responses: list[str] = []
        self._closed = False
        self.route: Route = side.bridge.open_route(side.case, self._answer)
        #: The case's tools on the MCP tool server, when the agent is served them.
        self.served: ServedTools | None = None
        if serve_tools:
            try:
                self.served = ServedTools(side, lambda: self._turn)
            except RunError:
                self.route.close()
                raise

    @property
    def mcp_url(self) -> str | None:
        """The MCP endpoint serving the case's tools, when the agent is served them."""
        return self.served.route.url if self.served is not None else None

    def _answer(self, request: BridgeRequest) -> ModelReply:
        # The bridge serialises the requests of one route, so the provider, a
        # per-case object, is never asked twice at once.
        tools = offered_tools(request.tools)
        asked = ModelRequest(
            self._turn,
            self._step,
            request.messages,
            tools,
            request_settings(request.body),
            request.api,
            received=time.monotonic(),
            traceparent=request.traceparent,
        )
        self._requests.append(asked)
        self._step += 1
        reply = self._provider.respond(request.messages, tools)
        self._requests[-1] = asked.answered(reply)
        self._exchanges.append(Exchange(self._turn, request.messages, reply))
        self._usage.append(RequestUsage(self._turn, self._step - 1, reply.model, reply.usage))
        return reply

    def run_turn(self, turn: int, user_input: str) -> str:
        self._turn = turn
        self._step = 0
        try:
            text = self.exchange_turn(turn, user_input)
        except RunError as exc:
            raise self.wire_error() or exc from None
        wire = self.wire_error()
        if wire is not None:  # the agent carried on after a refusal: its turn proves nothing
            raise wire
        self._responses.append(text)
        return text

    def wire_error(self) -> RunError | None:
        """The first failure on the routes (the model's, then the tools'), if any: the
        cause of whatever followed it."""
        if not self.route.errors:
            return self.served.error() if self.served is not None else None
        error = self.route.errors[0]
        return RunError(error if error.startswith("turn ") else f"turn {self._turn}: {error}")

    def record(self) -> RunRecord:
        if self.served is not None:
            self.served.ended = True  # a tools/call from now on comes after the case
        try:
            self.finish()
        except RunError as exc:
            raise self.wire_error() or exc from None
        wire = self.wire_error()
        if wire is not None:
            raise wire
        exchanges = list(self._exchanges)
        record = RunRecord(
            list(self._responses),
            [],
            sum(exchange.reply.input_tokens for exchange in exchanges),
            sum(exchange.reply.output_tokens for exchange in exchanges),
            list(self._requests),
            list(self._usage),
        )
        if self.served is not None:
            return self.served.record(record, wire_calls(exchanges, self._dialect), self._dialect)
        record.calls = calls_from_wire(exchanges, self._dialect)
        return record

    def requests_so_far(self) -> Sequence[ModelRequest]:
        return list(self._requests)

    def close(self) -> None:
        self._close_routes()
        self.release()

    def _close_routes(self) -> None:
        """Stop serving the case's routes (idempotent): for a session that could not start."""
        if not self._closed:
            self._closed = True
            self.route.close()
            if self.served is not None:
                self.served.close()

    @abstractmethod
    def exchange_turn(self, turn: int, user_input: str) -> str:
        """Give the agent one user input; return its final text. Raises :class:`RunError`."""

    def finish(self) -> None:
        """After the last turn: check that the agent ended well. Raises :class:`RunError`."""

    def release(self) -> None:
        """Let the agent go (idempotent; may be called from another thread)."""
