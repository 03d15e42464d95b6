"""What every family gets from its base, whoever wrote it: strict parameters, unknown
keys refused whatever kind of object declares them, empty strings refused unless
the family allows them, and no admission rule unless it declares one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from pydantic import BaseModel, ConfigDict, RootModel, ValidationError
from typing_extensions import TypedDict

from zeroclaw_eval import (
    AdmissionError,
    CheckResult,
    Family,
    Params,
    PluginLoadError,
    Registry,
    RunMode,
    RunRecord,
    get_plugin_manager,
    hookimpl,
)
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.grading.family import NonEmptyStr, lax_parameter_types

from .conftest import echo_case

SOURCE = "suite/case.json"


@pydantic.dataclasses.dataclass
class LaxData:
    """A pydantic dataclass: by default it ignores unknown keys."""

    path: str


@pydantic.dataclasses.dataclass(config=ConfigDict(extra="forbid"))
class StrictData:
    path: str


@dataclasses.dataclass
class PlainData:
    path: str


class LaxModel(BaseModel):
    path: str


class Entry(Params):
    path: NonEmptyStr
    count: int = 0


class Paths(RootModel[list[str]]):
    pass


class Closed(TypedDict, closed=True):  # type: ignore[call-arg]
    """A closed TypedDict (PEP 728): pydantic forbids its unknown keys without a config."""

    path: str


class Open(TypedDict):
    path: str


def family_of(params: Any, **attributes: Any) -> Family[Any]:
    class Custom(Family[Any]):
        name = "custom"

        def grade(self, params: Any, run: RunRecord) -> list[CheckResult]:
            return [CheckResult(self.name, False, "graded")]

    Custom.params = params
    for key, value in attributes.items():
        setattr(Custom, key, value)
    return Custom()


@pytest.mark.parametrize(
    ("params", "lax"),
    [
        (LaxData, ["LaxData"]),
        (list[PlainData], ["PlainData"]),
        (dict[str, list[LaxModel]], ["LaxModel"]),
        (tuple[LaxModel, LaxData, StrictData], ["LaxData", "LaxModel"]),
        (StrictData, []),
        (list[Entry], []),
        (Paths, []),
        (list[NonEmptyStr], []),
        (list[Closed], []),
        (Open, ["Open"]),
    ],
    ids=[
        "pydantic-dataclass",
        "stdlib-dataclass",
        "nested-model",
        "several",
        "strict-dataclass",
        "params",
        "root-model",
        "strings",
        "closed-typed-dict",
        "open-typed-dict",
    ],
)
def test_lax_parameter_types_names_every_object_type_that_keeps_unknown_keys(
    params: Any, lax: list[str]
) -> None:
    assert lax_parameter_types(family_of(params)) == lax


def registers(family: Family[Any]) -> object:
    class Plugin:
        @hookimpl
        def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
            register(family)

    return Plugin()


def registry_with(family: Family[Any]) -> Registry:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(registers(family), name="custom-plugin")
    return Registry.from_plugin_manager(pm)


def test_a_family_with_a_lax_pydantic_dataclass_is_refused_by_the_registry() -> None:
    with pytest.raises(PluginLoadError) as refused:
        registry_with(family_of(list[LaxData]))
    assert str(refused.value) == (
        "plugin 'custom-plugin' registered family 'custom' whose parameters accept unknown "
        'keys (LaxData): build them on zeroclaw_eval.Params, or set extra="forbid"'
    )


def admit(registry: Registry, replay: RunMode, params: Any) -> Any:
    case = admit_data(echo_case(expects={"custom": params}), registry, replay, source=SOURCE)
    return case.expectations[0].params


def refusal(registry: Registry, replay: RunMode, params: Any) -> str:
    with pytest.raises(AdmissionError) as refused:
        admit(registry, replay, params)
    return str(refused.value)


@pytest.fixture(scope="module")
def entries() -> Registry:
    return registry_with(family_of(list[Entry]))


@pytest.fixture(scope="module")
def entries_mode(entries: Registry) -> RunMode:
    return entries.modes["replay"].obj


def test_params_are_strict_closed_and_frozen(entries: Registry, entries_mode: RunMode) -> None:
    [entry] = admit(entries, entries_mode, [{"path": "a", "count": 2}])
    assert (entry.path, entry.count) == ("a", 2)
    with pytest.raises(ValidationError):
        entry.count = 3
    assert refusal(entries, entries_mode, [{"path": "a", "count": "2"}]) == (
        f'{SOURCE}: expects.custom[0].count="2": must be an integer, not a string'
    )
    assert refusal(entries, entries_mode, [{"path": "a", "cuont": 2}]) == (
        f"{SOURCE}: expects.custom[0].cuont=2: unknown key (did you mean 'count'?)"
    )


def test_an_empty_non_empty_string_is_refused_by_its_type(
    entries: Registry, entries_mode: RunMode
) -> None:
    # The type refuses it before the family-wide rule is asked: the shorter message.
    assert refusal(entries, entries_mode, [{"path": ""}]) == (
        f'{SOURCE}: expects.custom[0].path="": must not be empty'
    )


def test_empty_strings_are_refused_anywhere_unless_the_family_allows_them() -> None:
    strict = registry_with(family_of(dict[str, list[str]]))
    mode = strict.modes["replay"].obj
    assert refusal(strict, mode, {"a": ["x", ""]}) == (
        f'{SOURCE}: expects.custom.a[1]="": must not be empty (an empty string matches anything)'
    )
    assert refusal(strict, mode, {"": ["x"]}) == (
        f'{SOURCE}: expects.custom[""]: must not be empty (an empty string matches anything)'
    )
    lenient = registry_with(family_of(dict[str, list[str]], allow_empty_strings=True))
    assert admit(lenient, lenient.modes["replay"].obj, {"": [""]}) == {"": [""]}


def test_a_family_without_rules_of_its_own_admits_well_typed_parameters(
    entries: Registry, entries_mode: RunMode
) -> None:
    family = entries.families["custom"].obj
    assert list(family.rules([], {})) == []
    assert family.adapter is family.adapter  # built once per family object
    assert family.description == ""
    assert [e.path for e in admit(entries, entries_mode, [{"path": "a"}, {"path": "b"}])] == [
        "a",
        "b",
    ]


def test_params_models_are_strict_without_being_asked() -> None:
    # A family may validate its own objects outside admission (which also passes
    # strict=True): the base is strict by itself.
    with pytest.raises(ValidationError):
        Entry.model_validate({"path": "a", "count": "2"})
    assert Entry.model_validate({"path": "a", "count": 2}).count == 2


def test_the_built_in_families_describe_themselves_as_listed(registry: Registry) -> None:
    # What `zeroclaw eval plugins` and the fixture schema show an author.
    described = {name: entry.obj.description for name, entry in registry.families.items()}
    assert {name: described[name] for name in BUILT_IN} == BUILT_IN


BUILT_IN = {
    "response_contains": "the final response contains each substring",
    "response_not_contains": "the final response contains none of the substrings",
    "response_matches": "each regular expression is found (search) in the final response",
    "tools_used": "each tool was called at least once",
    "tools_not_used": "none of the tools was called",
    "max_tool_calls": "at most n tool calls were dispatched",
    "min_tool_calls": "at least n tool calls were dispatched",
    "exact_tool_calls": "exactly n tool calls were dispatched",
    "all_tools_succeeded": "true: every dispatched call succeeded; false: at least one failed",
    "tool_arguments_contain": "the arguments dispatched to a tool contain the needle",
    "tool_results_contain": "the text a tool returned (or its error) contains the needle",
    "max_input_tokens": "at most n input tokens, as the provider reported them, over the case",
    "max_cached_input_tokens": "at most n cached input tokens, as the provider reported them, "
    "over the case",
    "max_reasoning_tokens": "at most n reasoning tokens, as the provider reported them, over "
    "the case",
    "max_output_tokens": "at most n output tokens, as the provider reported them, over the case",
    "max_total_tokens": "at most n input plus output tokens, as the provider reported them",
    "max_cost": "at most this cost over the case, priced at [eval.rates] (their currency)",
    "max_request_chars": "every model request shows the model at most n characters of text",
    "max_total_request_chars": "the case's model requests show the model at most n characters "
    "in all",
}


def test_a_family_that_says_nothing_of_tools_or_scripts_finds_nothing() -> None:
    """The defaults a third-party family inherits: no tool it names, and nothing
    the script settles (what `eval check` and the tool offer iterate over)."""
    from zeroclaw_eval.grading.script import Script, ScriptedCall

    family = family_of(list[str])
    script = Script(calls=(ScriptedCall(0, "echo"),), replies=("hi",), final_response="hi")
    assert list(family.consistency(["x"], script)) == []
    assert list(family.tools_named(["x"])) == []


#: What each built-in family reads of a run (docs/HOOKS.md, "evidence"): an agent
#: that cannot make one of these observable refuses the family at admission.
READS = {
    "all_tools_succeeded": {"calls", "status"},
    "exact_tool_calls": {"calls"},
    "max_tool_calls": {"calls"},
    "min_tool_calls": {"calls"},
    "model_never_saw": {"requests"},
    "model_saw": {"requests"},
    "response_contains": {"response"},
    "response_matches": {"response"},
    "response_not_contains": {"response"},
    "tool_arguments_contain": {"calls", "arguments"},
    "tool_call_status": {"calls", "status"},
    "tool_results_contain": {"calls", "results"},
    "tools_not_used": {"calls"},
    "tools_offered": {"requests"},
    "tools_used": {"calls"},
    "max_input_tokens": {"usage"},
    "max_cached_input_tokens": {"usage"},
    "max_reasoning_tokens": {"usage"},
    "max_output_tokens": {"usage"},
    "max_total_tokens": {"usage"},
    "max_cost": {"usage"},
    "max_request_chars": {"requests"},
    "max_total_request_chars": {"requests"},
}


@pytest.mark.parametrize("name", sorted(READS))
def test_each_built_in_family_declares_what_it_reads(name: str) -> None:
    family = Registry.from_plugin_manager(get_plugin_manager(load_entry_points=False)).families
    assert family[name].obj.evidence([]) == READS[name]
