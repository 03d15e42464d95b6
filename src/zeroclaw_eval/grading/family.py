"""Expectation families: the keys of a fixture's ``expects``.

A family declares the type of its parameters, may add admission rules of its own,
and turns its parameters plus a :class:`~zeroclaw_eval.grading.record.RunRecord` into checks.
Built-in and third-party families are the same kind of object and go through the
same admission, so a plugin family fails closed exactly like a built-in one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, StringConstraints, TypeAdapter

from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.report.model import CheckResult

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script, Steps

P = TypeVar("P")

#: The kinds of evidence a run record holds, as :meth:`Family.evidence` names them.
EVIDENCE = frozenset(
    {"response", "calls", "arguments", "results", "status", "requests", "answers", "usage"}
)

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
"""A string that must not be empty (an empty needle matches everything)."""


class Params(BaseModel):
    """Base for a family's parameter objects: strict, frozen, unknown keys refused.

    A family whose parameters are objects must build them from this base (or set
    ``extra="forbid"`` itself); the registry refuses a family that would accept
    unknown keys.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


@dataclass(frozen=True)
class Problem:
    """A family-specific admission failure.

    ``path`` is relative to the family's entry in ``expects``: ``()`` for the entry
    itself, ``(1, "needle")`` for ``expects.<family>[1].needle``.
    """

    path: tuple[str | int, ...]
    message: str


class ToolReference(NamedTuple):
    """A tool an entry names, for the tool-offer rule.

    ``path`` is relative to the family's entry (as for :class:`Problem`),
    ``written`` the name or pattern as the fixture wrote it, and ``accepts``
    tells whether a tool name fits it.
    """

    path: tuple[str | int, ...]
    written: str
    accepts: Callable[[str], bool]


class Family(ABC, Generic[P]):
    """An expectation family. Subclass it, set ``name`` and ``params``, implement ``grade``.

    ``params`` is any type pydantic can validate strictly: ``list[NonEmptyStr]``,
    ``int``, a :class:`Params` model, a list of them...

    Every family gets, for free: strict validation (no coercion, unknown keys
    refused), refusal of empty strings anywhere in its parameters (unless
    ``allow_empty_strings``), and refusal of a fixture whose ``expects`` would
    produce no check at all. ``grade`` must return exactly one check per declared
    entry and never short-circuit one check on another.
    """

    name: ClassVar[str]
    params: ClassVar[Any]
    description: ClassVar[str] = ""
    allow_empty_strings: ClassVar[bool] = False

    @cached_property
    def adapter(self) -> TypeAdapter[P]:
        """The strict validator for ``params``, built once per family object."""
        return TypeAdapter(self.params)

    def rules(self, params: P, expects: Mapping[str, Any]) -> Iterable[Problem]:
        """Admission rules beyond the parameter type; return the problems found.

        ``expects`` maps every family named in the fixture to its validated
        parameters, for rules that relate families (``min_tool_calls`` against
        ``max_tool_calls``, say). Called only when the parameters are well typed.
        """
        return ()

    def tools_named(self, params: P) -> Iterable[ToolReference]:
        """The tools the entries name that the agent must be able to call.

        When the harness's own tools are offered, admission refuses a reference
        that fits no offered tool nor any tool the fixture's script calls: such
        an entry could only pass on a call the agent was never given. Default:
        none.
        """
        return ()

    def turns_named(self, params: P) -> Iterable[tuple[tuple[str | int, ...], int]]:
        """The turns the entries limit themselves to, each with its path in ``params``.

        Admission refuses a turn past the fixture's last: no run can reach it, so
        the entry could never be met (or never fail). Default: none.
        """
        return ()

    def evidence(self, params: P) -> frozenset[str] | None:
        """What of the run its entries read, among :data:`EVIDENCE`: ``response`` (the
        final text), ``calls`` (which tools were called, how often, in which order),
        ``arguments`` (the arguments they were dispatched with), ``results`` (what they
        returned), ``status`` (whether each succeeded, by the tool's own flag),
        ``requests`` (what the model was shown), ``answers`` (which call each result
        shown to the model answers, by its call id), ``usage`` (the tokens the provider
        reported for its replies).

        An agent under test, or a run mode, that cannot make one of them observable
        refuses the entry at admission, with its reason
        (:attr:`~zeroclaw_eval.agents.base.AgentUnderTest.unobservable`,
        :attr:`~zeroclaw_eval.modes.base.RunMode.unobservable`), so that no check
        rests on what the harness never saw. ``None`` (the default): undeclared,
        and admitted for every agent.
        """
        return None

    def replay_rules(self, params: P, steps: Steps) -> Iterable[Problem]:
        """Admission rules against the script, in a mode that replays it: where the
        script serves every response, an entry it settles either way (it could not
        fail, or never pass) is refused. ``steps`` holds each turn's scripted steps.
        None by default."""
        return ()

    def consistency(self, params: P, script: Script) -> Iterable[Finding]:
        """Entries the case's script can never satisfy, for ``zeroclaw eval check``
        (see :mod:`zeroclaw_eval.grading.script`). None by default."""
        return ()

    def settled(self, params: P, script: Script) -> Iterable[Problem]:
        """Entries the script settles as passing, for an agent that plays it as
        written (the reference loop, in replay): every input of the check is fixed
        by the fixture (the answer it passes through, the arguments it dispatches as
        scripted, the results scripted in ``tool_results``), so the check cannot
        fail and certifies nothing. Admission refuses them, with the reason. None
        by default."""
        return ()

    @abstractmethod
    def grade(self, params: P, run: RunRecord) -> list[CheckResult]:
        """One :class:`CheckResult` per declared entry, graded against ``run``."""


#: The keys of a pydantic core schema node whose values are data, not schemas: a
#: field's default, and its metadata (``json_schema_extra`` among them).
_DATA_KEYS = frozenset({"default", "metadata"})


def _type_name(node: dict[str, Any]) -> str:
    """The name of the object type a core schema node describes, for an error: its
    class, else (a schema a type built itself) its kind and reference."""
    cls = node.get("cls")
    if cls is not None:
        return str(cls.__name__)
    return f"a {node['type']} schema {node.get('ref', '')}".rstrip()


def lax_parameter_types(family: Family[Any]) -> list[str]:
    """Names of the object types in a family's ``params`` that do not refuse unknown keys.

    A model, TypedDict or dataclass that ignores (or keeps) unknown keys would let
    a misspelt optional key through admission silently, so the registry refuses a
    family that has any.
    """
    lax: list[str] = []
    stack: list[Any] = [family.adapter.core_schema]
    while stack:
        node = stack.pop()
        if isinstance(node, (list, tuple)):  # a union's choices may be (schema, label)
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("type") in ("model", "typed-dict", "dataclass") and not node.get(
                "root_model"
            ):
                # A schema a type builds itself (__get_pydantic_core_schema__) may give
                # neither a config nor a class: it is lax unless it says otherwise.
                behaviour = node.get("extra_behavior") or (node.get("config") or {}).get(
                    "extra_fields_behavior"
                )
                if behaviour != "forbid":
                    lax.append(_type_name(node))
            # A default, a literal or metadata is data, never a schema: a field
            # defaulting to {"type": "model"} is not a model to check.
            stack.extend(value for key, value in node.items() if key not in _DATA_KEYS)
    return sorted(set(lax))
