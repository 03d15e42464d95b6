"""Families over what the model was shown: ``model_saw``, ``model_never_saw``,
``tools_offered``.

They grade the model requests the agent made
(:attr:`~zeroclaw_eval.grading.record.RunRecord.requests`), as it sent them, for
the reference loop and bridged agents alike: that the tool's real result reached
the model, that an earlier turn is still in the history, that a secret never
reached it, which tools it was offered.

A needle is looked for in the texts of the messages (of ``role`` only, when
given; assistant tool-call arguments count as the assistant's text) and, when no
``role`` is given, also in the offered tools' names, descriptions and parameter
schemas. ``turn`` and ``step`` (0-based) narrow the requests looked at: the
``step``-th request of turn ``turn``. A check over requests that do not exist (no
request at that turn or step, or an agent that records none) fails, whichever
way it asserts: "never saw" is certified only by requests that were made.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import NonNegativeInt, model_validator

from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params, Problem
from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural, shorten

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

Role = Literal["system", "developer", "user", "assistant", "tool"]


class Needle(Params):
    """A needle, and where in the model's requests to look for it. A bare string is a
    needle looked for anywhere."""

    needle: NonEmptyStr
    turn: NonNegativeInt | None = None
    step: NonNegativeInt | None = None
    role: Role | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, data: Any) -> Any:
        # One model for both spellings, so that a bad entry gets one error, not one
        # per branch of a union.
        return {"needle": data} if isinstance(data, str) else data

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"anyOf": [{"type": "string", "minLength": 1}, handler(core_schema)]}

    @property
    def scope(self) -> str:
        """Where it is looked for, as a check names it (``turn 1 step 0 user``)."""
        parts = [f"turn {self.turn}" if self.turn is not None else ""]
        parts.append(f"step {self.step}" if self.step is not None else "")
        parts.append(f"role {self.role}" if self.role is not None else "")
        return " ".join(part for part in parts if part)

    def covers(self, other: Needle) -> bool:
        """Whether every request and role ``other`` looks at, this one looks at too."""
        return all(
            mine is None or mine == theirs
            for mine, theirs in (
                (self.turn, other.turn),
                (self.step, other.step),
                (self.role, other.role),
            )
        )


def in_scope(run: RunRecord, needle: Needle) -> list[ModelRequest]:
    return run.requests_at(needle.turn, needle.step)


def haystack(request: ModelRequest, role: str | None) -> list[str]:
    """The texts of ``request`` a needle is looked for in (see the module's documentation)."""
    texts = request.texts(role)
    if role is None:
        for tool in request.tools:
            texts.append(tool.name)
            texts.append(tool.description or "")
            texts.append(json.dumps(tool.parameters, ensure_ascii=False, default=str))
    return texts


def where(request: ModelRequest) -> str:
    return f"turn {request.turn} step {request.step}"


def missing_requests(run: RunRecord, needle: Needle) -> str:
    if not run.requests:
        return "no model request was recorded (the agent made none, or records none)"
    return f"no model request at {needle.scope} (recorded: {plural(len(run.requests), 'request')})"


class _NeedleFamily(Family[list[Needle]]):
    params = list[Needle]

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"requests"})

    def turns_named(self, params: list[Needle]) -> Iterable[tuple[tuple[str | int, ...], int]]:
        return [((index, "turn"), n.turn) for index, n in enumerate(params) if n.turn is not None]

    def check_name(self, needle: Needle) -> str:
        scope = f" at {needle.scope}" if needle.scope else ""
        return f"{self.name}: {shorten(needle.needle)}{scope}"

    def grade(self, params: list[Needle], run: RunRecord) -> list[CheckResult]:
        return [self._one(needle, run) for needle in params]

    def _one(self, needle: Needle, run: RunRecord) -> CheckResult:
        check = self.check_name(needle)
        requests = in_scope(run, needle)
        if not requests:  # fails either way: a check over requests never made
            return CheckResult(check, False, missing_requests(run, needle))
        return self.judge(check, needle, requests)

    @abstractmethod
    def judge(self, check: str, needle: Needle, requests: list[ModelRequest]) -> CheckResult:
        """The verdict on ``needle`` over the ``requests`` in its scope (at least one)."""


class ModelSaw(_NeedleFamily):
    """The model was shown ``needle``: in some request in scope."""

    name = "model_saw"
    description = (
        "the model was shown the needle (optionally at a turn, a step, in messages of a role)"
    )

    def judge(self, check: str, needle: Needle, requests: list[ModelRequest]) -> CheckResult:
        for request in requests:
            if any(needle.needle in text for text in haystack(request, needle.role)):
                return CheckResult(check, True, f"shown at {where(request)}")
        last = requests[-1]
        shown_texts = "; ".join(shorten(text, 80) for text in last.texts(needle.role)[-3:])
        return CheckResult(
            check,
            False,
            f"never shown in {plural(len(requests), 'request')}; the last "
            f"({where(last)}) ended with: {shown_texts or 'nothing'}",
        )


class ModelNeverSaw(_NeedleFamily):
    """The model was never shown ``needle``: in no request in scope (and there were some)."""

    name = "model_never_saw"
    description = "the model was never shown the needle (in any request made, or those in scope)"

    def rules(self, params: list[Needle], expects: Mapping[str, Any]) -> Iterable[Problem]:
        seen: list[Needle] = expects.get(ModelSaw.name, [])
        for index, forbidden in enumerate(params):
            for saw in seen:
                if forbidden.needle in saw.needle and forbidden.covers(saw):
                    yield Problem(
                        (index,),
                        f"contradicts {ModelSaw.name} {saw.needle!r}"
                        + (f" at {saw.scope}" if saw.scope else "")
                        + ", which requires the model to be shown it",
                    )

    def judge(self, check: str, needle: Needle, requests: list[ModelRequest]) -> CheckResult:
        for request in requests:
            for text in haystack(request, needle.role):
                if needle.needle in text:
                    return CheckResult(check, False, f"shown at {where(request)}: {shorten(text)}")
        return CheckResult(check, True, f"not shown in {plural(len(requests), 'request')}")


class ToolsOffer(Params):
    """Which tools every request in scope offered, and what their schemas require."""

    exactly: list[NonEmptyStr] | None = None
    at_least: list[NonEmptyStr] | None = None
    required: dict[NonEmptyStr, list[NonEmptyStr]] | None = None
    """Per tool, parameters its schema must list as ``required``."""
    turn: NonNegativeInt | None = None


class ToolsOffered(Family[ToolsOffer]):
    """Every request (of ``turn``, when given) offered ``exactly`` these tools, or
    ``at_least`` these; ``required`` names parameters a tool's schema must require."""

    name = "tools_offered"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"requests"})

    params = ToolsOffer
    description = (
        "every model request offered exactly / at least these tools, "
        "optionally with schema properties required"
    )

    def turns_named(self, params: ToolsOffer) -> Iterable[tuple[tuple[str | int, ...], int]]:
        return [] if params.turn is None else [(("turn",), params.turn)]

    def rules(self, params: ToolsOffer, expects: Mapping[str, Any]) -> Iterable[Problem]:
        if (params.exactly is None) == (params.at_least is None):
            yield Problem((), "give exactly one of exactly and at_least")
            return
        if params.at_least is not None and not params.at_least:
            yield Problem(("at_least",), "an empty at_least asserts nothing")
        named = params.exactly if params.exactly is not None else params.at_least or []
        key = "exactly" if params.exactly is not None else "at_least"
        for index, tool in enumerate(named):
            if tool in named[:index]:
                yield Problem((key, index), f"names {tool!r} twice")
        for tool, properties in (params.required or {}).items():
            if tool not in named:
                yield Problem(("required", tool), f"{tool!r} is not among the tools of {key}")
            elif not properties:
                yield Problem(("required", tool), "an empty list asserts nothing")

    def grade(self, params: ToolsOffer, run: RunRecord) -> list[CheckResult]:
        requests = run.requests_at(params.turn)
        scope = "" if params.turn is None else f" at turn {params.turn}"
        exact = params.exactly is not None
        named = (params.exactly if exact else params.at_least) or []
        check = f"{self.name}: {'exactly' if exact else 'at least'} {', '.join(named) or 'none'}"
        checks = [self._offer(check + scope, requests, set(named), exact, run)]
        for tool, properties in (params.required or {}).items():
            checks.append(
                self._required(
                    f"{self.name}: {tool} requires {', '.join(properties)}",
                    requests,
                    tool,
                    properties,
                    run,
                )
            )
        return checks

    def _offer(
        self,
        check: str,
        requests: list[ModelRequest],
        named: set[str],
        exact: bool,
        run: RunRecord,
    ) -> CheckResult:
        if not requests:
            return CheckResult(check, False, _no_requests(run))
        for request in requests:
            offered = set(request.tool_names)
            missing = sorted(named - offered)
            extra = sorted(offered - named) if exact else []
            if missing or extra:
                said = [f"missing {', '.join(missing)}" if missing else ""]
                said.append(f"also offered {', '.join(extra)}" if extra else "")
                return CheckResult(
                    check,
                    False,
                    f"{where(request)} offered {', '.join(request.tool_names) or 'no tool'}: "
                    + "; ".join(part for part in said if part),
                )
        return CheckResult(check, True, f"as offered in {plural(len(requests), 'request')}")

    def _required(
        self,
        check: str,
        requests: list[ModelRequest],
        tool: str,
        properties: list[str],
        run: RunRecord,
    ) -> CheckResult:
        if not requests:
            return CheckResult(check, False, _no_requests(run))
        for request in requests:
            offered = {entry.name: entry for entry in request.tools}
            entry = offered.get(tool)
            if entry is None:
                return CheckResult(check, False, f"{where(request)} did not offer {tool}")
            required = entry.parameters.get("required")
            listed = required if isinstance(required, list) else []
            missing = [name for name in properties if name not in listed]
            if missing:
                return CheckResult(
                    check,
                    False,
                    f"{where(request)}: the schema of {tool} does not require "
                    f"{', '.join(missing)} (required: {', '.join(map(str, listed)) or 'none'})",
                )
        return CheckResult(check, True, f"required in {plural(len(requests), 'request')}")


def _no_requests(run: RunRecord) -> str:
    if not run.requests:
        return "no model request was recorded (the agent made none, or records none)"
    return f"no model request in scope (recorded: {plural(len(run.requests), 'request')})"


FAMILIES: tuple[Callable[[], Family[Any]], ...] = (ModelSaw, ModelNeverSaw, ToolsOffered)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in FAMILIES:
        register(family())
