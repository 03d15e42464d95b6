"""The fixture format (``LlmTrace``): strict pydantic models, unknown keys refused.

``expects`` is kept raw here: each family validates its own entry during
admission (:mod:`zeroclaw_eval.case.admission`), so plugin families are held to the
same rules as built-in ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, model_validator
from pydantic_core import PydanticCustomError

from zeroclaw_eval.grading.family import NonEmptyStr

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import ScriptedStep, Steps

SCHEMA_KEY = "$schema"
"""A top-level key naming the JSON Schema an editor checks the fixture against
(``zeroclaw eval schema``). Admission allows it, as a string, and ignores it."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


#: The longest scripted delay before a reply, in seconds: a delay is there to make
#: a client's timeout fire, and a run must never wait longer than a case could.
MAX_DELAY_S = 60.0


class ToolCall(_Strict):
    """A tool call the scripted model makes: ``arguments`` as a JSON object, or
    ``arguments_text``, arguments that are not valid JSON (a fault)."""

    id: NonEmptyStr
    name: NonEmptyStr
    arguments: dict[str, Any] = Field(
        default_factory=dict, json_schema_extra={"description": "required unless arguments_text"}
    )
    arguments_text: str | None = None
    """The model's text for the arguments when they are not valid JSON: served as is.
    Exactly one of the two is given (:mod:`zeroclaw_eval.case.faults` refuses
    both, or neither)."""


class ReportedUsage(_Strict):
    """The usage the provider reported for a recorded reply (``zeroclaw eval record``
    keeps it, kind by kind; a kind it did not report is absent). A record of the
    recording: replay serves the step's ``input_tokens``/``output_tokens`` and never
    grades this."""

    input_tokens: NonNegativeInt | None = None
    output_tokens: NonNegativeInt | None = None
    cached_input_tokens: NonNegativeInt | None = None
    reasoning_tokens: NonNegativeInt | None = None
    cache_write_input_tokens: NonNegativeInt | None = None


class TextResponse(_Strict):
    """A scripted reply that ends the turn with text."""

    type: Literal["text"]
    content: str
    refusal: str | None = None
    """The refusal text a model sent in the API's ``refusal`` field, if any."""
    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    model: NonEmptyStr | None = None
    """The model the server said answered (kept by ``record``), if known."""
    usage: ReportedUsage | None = None
    """What the provider reported (kept by ``record``; absent or ``null``: none)."""
    finish: Literal["stop", "length"] = "stop"
    """``length``: the text was cut at the output limit (a fault)."""


class ToolCallsResponse(_Strict):
    """A scripted reply that asks for one or more tool calls."""

    type: Literal["tool_calls"]
    content: str | None = None
    """Text the model sent beside its tool calls; absent when it sent none (``null``)."""
    tool_calls: Annotated[list[ToolCall], Field(min_length=1)]
    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    model: NonEmptyStr | None = None
    """The model the server said answered (kept by ``record``), if known."""
    usage: ReportedUsage | None = None
    """What the provider reported (kept by ``record``; absent or ``null``: none)."""
    dropped: bool = False
    """The connection drops in the middle of the last tool call (a fault): the
    client never gets the reply whole."""


class HttpErrorResponse(_Strict):
    """A scripted HTTP error the model's server answers with instead of a reply (a fault)."""

    type: Literal["http_error"]
    status: Annotated[int, Field(ge=400, le=599)]
    message: NonEmptyStr | None = None
    """The error's text (default: the status's usual words)."""
    retry_after: Annotated[int, Field(ge=0, le=int(MAX_DELAY_S))] | None = None
    """Whole seconds of the ``Retry-After`` header (as HTTP has it), for a status a
    client retries."""


Response = Annotated[
    TextResponse | ToolCallsResponse | HttpErrorResponse, Field(discriminator="type")
]


class StoredRequest(_Strict):
    """The normalised request a step answered, as ``zeroclaw eval record`` stores it.

    Compact (see :mod:`zeroclaw_eval.grading.requests`): ``history`` counts the
    leading messages shared with the previous step's request, ``messages`` lists
    the rest; ``tools`` and ``settings`` are left out when they are the previous
    request's. Replay compares the agent's live request with it (``[eval] drift``).
    """

    history: NonNegativeInt = 0
    messages: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] | None = None
    settings: dict[str, Any] | None = None

    def stored(self) -> dict[str, Any]:
        """The entry as written, for :func:`~zeroclaw_eval.grading.requests.expand`."""
        entry: dict[str, Any] = {"history": self.history, "messages": self.messages}
        if self.tools is not None:
            entry["tools"] = self.tools
        if self.settings is not None:
            entry["settings"] = self.settings
        return entry


class Step(_Strict):
    """One scripted model response in a turn's queue, and optionally the request it answered."""

    response: Response
    request: StoredRequest | None = None
    delay_s: Annotated[float, Field(gt=0, le=MAX_DELAY_S)] | None = None
    """Seconds the model side waits before it answers (a fault a client's timeout meets)."""


class Turn(_Strict):
    """One user message and the queue of model responses scripted for it.

    ``steps`` may be omitted only where the run mode produces responses itself
    (live); replay refuses a turn without steps. An empty ``user_input`` is refused:
    no user sends nothing, and a turn that says nothing tests nothing of its own.
    """

    user_input: NonEmptyStr
    steps: list[Step] | None = None


class JsonRpcError(_Strict):
    """A JSON-RPC error a tool server answers a call with."""

    code: int
    message: NonEmptyStr


class ScriptedToolResult(_Strict):
    """What a tool returns to one call, scripted: its text, and whether it erred; or a
    fault of the tool's side instead (a JSON-RPC error, a dropped connection, a hang);
    ``delay_s`` before either."""

    result: str | None = None
    error: bool = False
    jsonrpc_error: JsonRpcError | None = None
    dropped: bool = False
    hang: bool = False
    delay_s: Annotated[float, Field(gt=0, le=MAX_DELAY_S)] | None = None

    @model_validator(mode="after")
    def _one_outcome(self) -> ScriptedToolResult:
        given = [
            name
            for name, present in (
                ("result", self.result is not None),
                ("jsonrpc_error", self.jsonrpc_error is not None),
                ("dropped", self.dropped),
                ("hang", self.hang),
            )
            if present
        ]
        if len(given) != 1:
            raise PydanticCustomError(
                "tool_outcome",
                "give exactly one of result, jsonrpc_error, dropped, hang"
                + (f" (given: {', '.join(given)})" if given else ""),
            )
        if self.error and self.result is None:
            raise PydanticCustomError("tool_outcome", "error marks a result: give its result")
        return self

    @property
    def fault(self) -> str | None:
        """The kind of tool-side fault scripted (as a ``ToolFault`` names it), or ``None``."""
        if self.jsonrpc_error is not None:
            return "jsonrpc_error"
        if self.dropped:
            return "dropped"
        return "hang" if self.hang else None


class ToolDefinition(_Strict):
    """A tool as the model was offered it while recording: its description and the JSON
    Schema of its arguments (a team's own MCP server's ``inputSchema``)."""

    description: str = ""
    input_schema: Annotated[
        dict[str, Any],
        # For editors: admission refuses any other type (case.scripted), as this says.
        Field(
            json_schema_extra={"properties": {"type": {"const": "object"}}, "required": ["type"]}
        ),
    ]


#: What a fixture's maker can have observed of the conversation it wrote.
Observed = Literal["replies", "requests", "tool_offer", "tool_results"]


class Capture(_Strict):
    """What the maker of a fixture (``record`` or ``import``) observed, and what not.

    A fixture is observed at the model boundary: the model's replies, and where
    listed in ``observed`` the requests that asked for them, the tool offer and the
    tool results that crossed it. ``sources`` name where the sequence came from,
    with versions (the live mode, an instrumentation's scope). ``results_missing``
    names the tools called whose result the source never showed. What a tool did
    beyond its result (a file written, a message sent) is never observed: a replay
    reproduces the sequence, not its effects.
    """

    made_by: Literal["record", "import"]
    sources: Annotated[list[NonEmptyStr], Field(min_length=1)]
    observed: list[Observed]
    results_missing: list[NonEmptyStr] = []
    draft_expects: list[NonEmptyStr] = []
    """The ``expects`` keys the maker derived from what it observed, for the author
    to keep, sharpen or drop: a draft until reviewed."""

    def summary(self) -> str:
        """One line for a report: what a replay of this fixture reproduced."""
        seen = ", ".join(self.observed)
        line = f"sequence reproduced (made by {self.made_by} from {'; '.join(self.sources)}"
        line += f"; observed: {seen})" if seen else ")"
        missing = ["tool side effects"]
        if self.results_missing:
            missing.append(f"results of {', '.join(self.results_missing)}")
        return f"{line}; not observed: {', '.join(missing)}"


class LlmTrace(_Strict):
    """A whole case as written in a fixture file."""

    model_name: NonEmptyStr
    turns: Annotated[list[Turn], Field(min_length=1)]
    expects: dict[str, Any]
    tool_results: dict[NonEmptyStr, list[ScriptedToolResult]] | None = None
    """Per tool name, what its calls return, in call order across the case: such a
    tool never runs (:mod:`zeroclaw_eval.case.scripted`)."""
    tool_definitions: dict[NonEmptyStr, ToolDefinition] | None = None
    """Per tool name, the description and schema the replay offers it with, as the
    recording offered it (instead of a registered tool's, or an open schema)."""
    drift_ignore: list[NonEmptyStr] | None = None
    """Paths of the normalised request that drift does not compare in this case."""
    capture: Capture | None = None
    """What the fixture's maker observed (``record`` and ``import`` write it)."""

    @property
    def stores_requests(self) -> bool:
        """Whether any step stores the request it answered (a recording does)."""
        for turn in self.turns:
            for step in turn.steps or ():
                if step.request is not None:
                    return True
        return False

    def stored_requests(self) -> list[tuple[int, int, dict[str, Any] | None]]:
        """``(turn, step, stored request or None)`` for every scripted step, in order."""
        return [
            (turn, number, None if step.request is None else step.request.stored())
            for turn, entry in enumerate(self.turns)
            for number, step in enumerate(entry.steps or ())
        ]

    def scripted_steps(self) -> Steps:
        """Each turn's steps as a replay serves them (:class:`ScriptedStep`)."""
        return tuple(tuple(_served(step) for step in turn.steps or ()) for turn in self.turns)


def _served(step: Step) -> ScriptedStep:
    from zeroclaw_eval.grading.script import ScriptedStep  # only for the families that ask

    response = step.response
    if isinstance(response, HttpErrorResponse):
        return ScriptedStep("http_error", response.retry_after)
    if isinstance(response, TextResponse):
        return ScriptedStep("length" if response.finish == "length" else None)
    if response.dropped:
        return ScriptedStep("dropped")
    unreadable = any(call.arguments_text is not None for call in response.tool_calls)
    return ScriptedStep(
        "invalid_arguments" if unreadable else None,
        calls=tuple(call.id for call in response.tool_calls),
    )
