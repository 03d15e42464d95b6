"""The agent under test: the fourth plugin kind, beside families, formatters and modes.

An :class:`AgentUnderTest` is registered through ``zeroclaw_eval_register_agents``
and selected with ``[eval] agent = "NAME"`` or ``--agent NAME`` (default
``reference``, the built-in loop). For each case attempt the runner asks it for an
:class:`AgentSession` and feeds it the case's user inputs, one turn at a time.

An agent never sees the fixture: it meets only the model side (:class:`ModelSide`:
the mode's provider, the harness's tools, or a route of the loopback model bridge
in front of the provider). Grading sees only the
:class:`~zeroclaw_eval.grading.record.RunRecord` the session leaves. What an agent
cannot make observable, it refuses at admission: see
:attr:`AgentUnderTest.cannot_certify`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.protocol import DEFAULT_MAX_TOOL_ITERATIONS
from zeroclaw_eval.util.redact import NO_SECRETS, Secrets

if TYPE_CHECKING:
    from zeroclaw_eval.bridge.wire import BridgeRequest
    from zeroclaw_eval.case.fixture import LlmTrace
    from zeroclaw_eval.config import EvalConfig
    from zeroclaw_eval.errors import RunError
    from zeroclaw_eval.grading.record import ModelRequest, RunRecord
    from zeroclaw_eval.modes.base import CaseProvider
    from zeroclaw_eval.protocol import ModelReply, Tool, ToolResult

#: The agent run when neither ``[eval].agent`` nor ``--agent`` names one.
DEFAULT_AGENT = "reference"


class Route(Protocol):
    """One case attempt's private way to the model bridge: the URL and key its agent
    is given, and what went wrong on it.

    ``base_url`` is what the OpenAI SDKs take (``.../v1``), ``root_url`` what the
    SDKs that add ``/v1`` themselves take (Anthropic's); ``errors`` holds one line
    per request the route refused (a script run dry, a malformed request, a wrong
    key), in order. :meth:`close` stops serving the route; it is idempotent.
    """

    @property
    def base_url(self) -> str: ...

    @property
    def root_url(self) -> str: ...

    @property
    def api_key(self) -> str: ...

    @property
    def errors(self) -> Sequence[str]: ...

    def close(self) -> None: ...


class RouteOpener(Protocol):
    """What an agent may ask of the run's loopback model bridge: a route of its own.

    ``answer`` answers each request made on the route, one at a time, and raises
    :class:`~zeroclaw_eval.errors.RunError` when it cannot; ``label`` names the
    case in the bridge's refusals. The bridge itself (its server, its other
    routes) stays the run's.
    """

    def open_route(self, label: str, answer: Callable[[BridgeRequest], ModelReply]) -> Route: ...


class ToolRoute(Protocol):
    """One case attempt's private MCP endpoint on the run's tool server.

    ``url`` is the streamable-HTTP endpoint the agent's MCP client connects to;
    ``errors`` one line per request refused on it (malformed JSON-RPC, a call the
    case's ``dispatch`` refused, a call after the case ended...), in order.
    :meth:`close` stops serving it; idempotent.
    """

    @property
    def url(self) -> str: ...

    @property
    def errors(self) -> Sequence[str]: ...

    def settle(self) -> None:
        """Wait until the call being run on the route, if any, is settled."""

    def close(self) -> None: ...


class ToolRouteOpener(Protocol):
    """What an agent may ask of the run's loopback MCP tool server: a route of its own.

    ``tools`` are listed to the agent's MCP client; ``dispatch`` runs each
    ``tools/call`` (name, arguments), one at a time, and raises
    :class:`~zeroclaw_eval.errors.RunError` to refuse one; ``where`` says where the
    case is (``"turn 1"``), to prefix the route's errors.
    """

    def open_route(
        self,
        label: str,
        tools: Mapping[str, Tool],
        dispatch: Callable[[str, dict[str, Any]], ToolResult],
        where: Callable[[], str] = ...,
    ) -> ToolRoute: ...


@dataclass(frozen=True)
class ModelSide:
    """Everything one case attempt offers the agent under test, and nothing of the fixture.

    ``provider`` is the mode's model side for this case (the runner brackets each
    turn on it); ``tools`` the harness's tools for this case (an agent with tools of
    its own ignores them); ``max_tool_iterations`` the model round trips asking
    for tools one turn may take, for an agent loop that honours it; ``bridge``
    opens routes of the run's loopback model bridge, for agents whose
    :attr:`AgentUnderTest.needs_bridge` is true (``None`` otherwise);
    ``tool_server`` opens routes of the run's MCP tool server, which serve
    ``tools``, for agents whose :attr:`AgentUnderTest.serves_tools` is true. ``case``
    names the case in error messages only. ``secrets`` is what the agent must
    never be handed nor quoted with (the provider's key, the variable holding
    it): a process started for the agent gets
    :meth:`~zeroclaw_eval.util.redact.Secrets.environment`, and text quoted from
    the agent (its stderr, an exception) goes through
    :meth:`~zeroclaw_eval.util.redact.Secrets.text`. ``traceparent`` is the W3C trace
    context of the case attempt's span when a report traces the run (``--report
    otel:...``), else ``None``: an agent that can, hands it to the agent under test
    so that the agent's own spans join the run's trace.
    """

    case: str
    provider: CaseProvider
    tools: Mapping[str, Tool]
    max_tool_iterations: int = DEFAULT_MAX_TOOL_ITERATIONS
    bridge: RouteOpener | None = None
    tool_server: ToolRouteOpener | None = None
    secrets: Secrets = NO_SECRETS
    traceparent: str | None = None


class AgentSession(ABC):
    """One agent for one case attempt: its history lives here, across the turns.

    :meth:`close` is called once the case ends, however it ends, and also from
    another thread when the case is abandoned (its wall-clock limit passed, or the
    suite was interrupted): it must be idempotent, and must end whatever
    :meth:`run_turn` is waiting on (a process, a connection) when it can.
    """

    @abstractmethod
    def run_turn(self, turn: int, user_input: str) -> str:
        """Run turn ``turn`` (0-based) and return the agent's final text for it.

        Raises :class:`~zeroclaw_eval.errors.RunError` when the turn cannot complete.
        """

    @abstractmethod
    def record(self) -> RunRecord:
        """What the case left for grading: final responses and recorded calls."""

    def requests_so_far(self) -> Sequence[ModelRequest]:
        """The model requests made so far, also after a turn failed: what a report
        shows of a case that hit a run error. None by default."""
        return ()

    def close(self) -> None:  # noqa: B027 - optional, nothing to release by default
        """Release what the session holds (processes, routes). Idempotent, any thread."""

    def diagnostics(self) -> str:
        """What the session can say about an agent that stopped answering (a command
        agent: the tail of its stderr), added to the error of a case abandoned at
        ``case_timeout_s``; ``""`` (the default) when it has nothing. Any thread."""
        return ""


class AgentUnderTest(ABC):
    """A kind of agent the harness can evaluate. Register one with
    ``zeroclaw_eval_register_agents``; ``name`` is what ``[eval].agent`` and
    ``--agent`` select.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""

    needs_bridge: ClassVar[bool] = False
    """Whether the agent talks to the model over HTTP: then the run starts one
    loopback model bridge (:mod:`zeroclaw_eval.bridge`) and stops it when it ends."""

    dialect: Dialect = CHAT
    """How the agent talks to its model (:class:`~zeroclaw_eval.agents.dialect.Dialect`):
    where it shows the model a tool's result, how it gives its answer. ``zeroclaw eval
    check`` reads the script the same way."""

    passes_replies_through: ClassVar[bool] = False
    """Whether the agent ends each turn with the model's last text, unchanged (the
    reference loop does): then ``zeroclaw eval check`` knows a replayed case's final
    response from its script, and refuses response needles it can never meet."""

    own_tools: bool = False
    """Whether the agent runs tools of its own instead of the harness's: then the
    harness's tool offer (``[eval.live] allowed_tools``) does not apply to it."""

    model_calls: bool = True
    """Whether the model's scripted tool calls are the agent's calls. False for an agent
    whose model writes code that calls the tools: the script then says nothing of how
    often a tool is called, and a scripted result no scripted call reaches is not
    refused at admission (one the run leaves unused is still a run error)."""

    serves_tools: bool = False
    """Whether the agent takes the case's tools from the harness over MCP: then the
    run starts one loopback MCP tool server (:mod:`zeroclaw_eval.toolserver`) and
    stops it when it ends."""

    mcp_upstream: Sequence[str] | str | None = None
    """A team's own MCP server whose tools are served to this agent when the run talks
    to a real model (``live``, ``record``): its argv (stdio) or its ``http(s)://`` URL
    (streamable HTTP); ``None``: none. Reached afresh for each case attempt."""

    mcp_upstream_timeout_s: float = 30.0
    """How long that server may take to answer one request (``[eval.agent]
    mcp_upstream_timeout_s``, whose default this repeats: ``config`` is not below this
    module)."""

    cannot_certify: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """Expectation families this agent cannot make observable, each with the reason.

    A fixture that uses one is refused at admission for this agent, naming the
    family and the reason: a check that would rest on a guess never runs.
    """

    @property
    def unobservable(self) -> Mapping[str, str]:
        """The kinds of evidence this agent cannot make observable, each with the reason
        (kinds as :meth:`~zeroclaw_eval.grading.family.Family.evidence` names them).

        A fixture entry whose family reads one of them is refused at admission for this
        agent, naming the family and the reason. None by default.
        """
        return MappingProxyType({})

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        """Refuse, at admission, what this agent cannot certify (paths from the trace's root).

        By default: every ``expects`` key listed in :attr:`cannot_certify`. Override
        to refuse fixtures by other rules too; this is the only place an agent sees
        a fixture, and it sees it before anything runs.
        """
        for family in trace.expects:
            reason = self.cannot_certify.get(family)
            if reason is not None:
                yield Problem(
                    ("expects", family),
                    f"agent {self.label!r} cannot certify this family: {reason}",
                )

    @property
    def label(self) -> str:
        """How reports and errors name this agent (its registered name by default)."""
        return self.name

    @property
    def run_name(self) -> str:
        """The agent as a report and the run history record it: its registered name
        (an ``[eval.agent]`` attachment adds what it names, ``factory:pkg.mod:make``)."""
        return self.name

    def concurrency(self, config: EvalConfig) -> int | None:
        """How many cases of this agent may run at once, or ``None`` (the default) to
        leave it to the mode. In ``replay`` the runner runs exactly this many; in other
        modes no more than the mode allows.
        """
        return None

    def check_config(self, config: EvalConfig) -> None:  # noqa: B027 - optional
        """Refuse, before any case runs, what this agent cannot run with.

        Raise :class:`~zeroclaw_eval.errors.ConfigError` naming the key. Does
        nothing by default.
        """

    def steps_left_unused(self, error: RunError) -> RunError:
        """The run error for a turn this agent ended with scripted steps unused.

        ``error`` names the turn and the first unused step and blames the
        fixture, as the reference loop asks the model whenever it should; an
        agent that may answer without asking says so instead.
        """
        return error

    @abstractmethod
    def start(self, side: ModelSide) -> AgentSession:
        """A fresh session for one case attempt, meeting only ``side``.

        Raises :class:`~zeroclaw_eval.errors.RunError` when the agent cannot start.
        """
