"""Plugins and the registry: name clashes, broken plugins, blocking, and the admission a
plugin family gets for free (the same as a built-in's).

Plugins are objects registered on a fresh plugin manager, exactly as pluggy
registers an entry point's module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal, Union

import pytest
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError, core_schema
from typing_extensions import TypedDict

from zeroclaw_eval import (
    AdmissionError,
    CaseProvider,
    CheckResult,
    EvalConfig,
    Family,
    Formatter,
    LlmTrace,
    Params,
    PluginLoadError,
    Problem,
    Registry,
    RunMode,
    RunRecord,
    SuiteReport,
    Tool,
    admit_file,
    get_plugin_manager,
    hookimpl,
)
from zeroclaw_eval.grading.family import EVIDENCE
from zeroclaw_eval.plugins.manager import DEFAULT_PLUGINS, PluginManager, builtin_name

from .conftest import echo_case


def registry_with(*plugins: tuple[str, object], blocked: Iterable[str] = ()) -> Registry:
    """The built-ins plus ``plugins`` (name, object), without installed entry points."""
    pm: PluginManager = get_plugin_manager(blocked=blocked, load_entry_points=False)
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    return Registry.from_plugin_manager(pm)


class Registers:
    """A plugin that registers the given objects through one hook."""

    def __init__(self, hook: str, *registrations: tuple[Any, ...]) -> None:
        def implementation(register: Callable[..., None]) -> None:
            for args in registrations:
                register(*args)

        setattr(self, hook, hookimpl(implementation))


# --- name clashes -----------------------------------------------------------------


class Shadow(Family[list[str]]):
    name = "response_contains"
    params = list[str]

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return [CheckResult(self.name, True, "always")]


class JsonAgain(Formatter):
    name = "json"

    def render(self, report: SuiteReport) -> str:
        return "{}\n"


class ReplayAgain(RunMode):
    name = "replay"

    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        raise NotImplementedError


@pytest.mark.parametrize(
    ("hook", "args", "message"),
    [
        (
            "zeroclaw_eval_register_families",
            (Shadow(),),
            "family 'response_contains' is registered by both plugin 'response' "
            "and plugin 'intruder'",
        ),
        (
            "zeroclaw_eval_register_formatters",
            (JsonAgain(),),
            "formatter 'json' is registered by both plugin 'json' and plugin 'intruder'",
        ),
        (
            "zeroclaw_eval_register_modes",
            (ReplayAgain(),),
            "run mode 'replay' is registered by both plugin 'replay' and plugin 'intruder'",
        ),
        (
            "zeroclaw_eval_register_tools",
            ("echo", object),
            "tool 'echo' is registered by both plugin 'echo' and plugin 'intruder'",
        ),
    ],
    ids=["family", "formatter", "mode", "tool"],
)
def test_a_name_two_plugins_claim_is_an_error_naming_both(
    hook: str, args: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(PluginLoadError) as clash:
        registry_with(("intruder", Registers(hook, args)))
    assert str(clash.value) == message


def test_a_clash_between_two_third_party_plugins_names_both() -> None:
    with pytest.raises(PluginLoadError) as clash:
        registry_with(
            ("first", Registers("zeroclaw_eval_register_tools", ("grep", object))),
            ("second", Registers("zeroclaw_eval_register_tools", ("grep", object))),
        )
    assert (
        str(clash.value) == "tool 'grep' is registered by both plugin 'first' and plugin 'second'"
    )


def test_a_plugin_whose_hook_raises_is_named() -> None:
    class Broken:
        @hookimpl
        def zeroclaw_eval_register_families(self, register: Callable[..., None]) -> None:
            raise ImportError("needs numpy")

    with pytest.raises(PluginLoadError) as broken:
        registry_with(("broken-plugin", Broken()))
    assert str(broken.value) == (
        "plugin 'broken-plugin' failed in zeroclaw_eval_register_families: ImportError: needs numpy"
    )


@pytest.mark.parametrize(
    ("hook", "args", "says"),
    [
        ("zeroclaw_eval_register_families", ("not a family",), "as a family"),
        ("zeroclaw_eval_register_formatters", (Shadow(),), "as a formatter"),
        ("zeroclaw_eval_register_tools", ("grep",), "expected register(name, factory)"),
        ("zeroclaw_eval_register_tools", ("", object), "expected register(name, factory)"),
    ],
    ids=["family", "formatter", "tool_without_factory", "tool_without_name"],
)
def test_a_malformed_registration_is_an_error_naming_the_plugin(
    hook: str, args: tuple[Any, ...], says: str
) -> None:
    with pytest.raises(PluginLoadError) as refused:
        registry_with(("sloppy", Registers(hook, args)))
    assert str(refused.value).startswith("plugin 'sloppy' registered ")
    assert says in str(refused.value)


def test_registrations_are_attributed_to_their_plugin(registry: Registry) -> None:
    assert registry.families["tool_results_contain"].plugin == "dispatch"
    assert registry.formatters["text"].plugin == "text"
    assert registry.modes["replay"].plugin == "replay"
    assert registry.tools["echo"].plugin == "echo"


# --- blocking ---------------------------------------------------------------------


def test_blocked_plugins_are_not_registered(
    write_case: Callable[..., Path], replay: RunMode
) -> None:
    pm = get_plugin_manager(blocked=["echo", "response"], load_entry_points=False)
    assert set(pm.origins) == {builtin_name(m) for m in DEFAULT_PLUGINS} - {"echo", "response"}
    registry = Registry.from_plugin_manager(pm)
    assert "echo" not in registry.tools
    assert not {"response_contains", "response_not_contains", "response_matches"} & set(
        registry.families
    )
    assert "tools_used" in registry.families
    # A fixture using a blocked family is refused, never graded without it.
    with pytest.raises(AdmissionError) as refused:
        admit_file(write_case(echo_case()), registry, replay)
    assert refused.value.field == "expects.response_contains"
    assert "no such expectation family" in refused.value.message


def test_a_blocked_name_frees_it_for_a_replacement() -> None:
    replacement = Registers("zeroclaw_eval_register_tools", ("echo", object))
    registry = registry_with(("my-echo", replacement), blocked=["echo"])
    assert registry.tools["echo"].plugin == "my-echo"


# --- a plugin family gets the same admission ---------------------------------------


class Entry(Params):
    path: str
    min_size: int = 1


class FileWritten(Family[list[Entry]]):
    """A plugin family with object parameters and a rule of its own."""

    name = "file_written"
    params = list[Entry]

    def rules(self, params: list[Entry], expects: Mapping[str, Any]) -> Iterable[Problem]:
        for index, entry in enumerate(params):
            if entry.path.startswith("/"):
                yield Problem((index, "path"), "must be relative to the workspace")

    def grade(self, params: list[Entry], run: RunRecord) -> list[CheckResult]:
        return [CheckResult(f"{self.name}: {e.path}", False, "no file") for e in params]


class Retries(Family[int]):
    name = "retries"
    params = int

    def grade(self, params: int, run: RunRecord) -> list[CheckResult]:
        return [CheckResult(f"{self.name}: {params}", len(run.calls) == params, "counted")]


class Mentions(Family[list[str]]):
    """Plain ``str`` parameters: the empty-string rule must still apply."""

    name = "mentions"
    params = list[str]

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return [CheckResult(f"{self.name}: {p}", False, "absent") for p in params]


class Tagged(Mentions):
    """Opts out of the empty-string rule, on purpose."""

    name = "tagged"
    allow_empty_strings = True


class Silent(Family[list[str]]):
    """Grades nothing, whatever it is given: it can never produce a check."""

    name = "silent"
    params = list[str]

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return []


class BrokenRules(Mentions):
    name = "broken_rules"

    def rules(self, params: list[str], expects: Mapping[str, Any]) -> Iterable[Problem]:
        raise TypeError("oops")


class LaxModel(BaseModel):
    """A parameter model that forgets ``extra="forbid"`` (pydantic ignores unknown keys)."""

    path: str


class LaxDict(TypedDict):
    path: str


class Forbidding(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    path: str


class AcmePlugin:
    @hookimpl
    def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
        for family in (FileWritten(), Retries(), Mentions(), Tagged(), Silent(), BrokenRules()):
            register(family)

    @hookimpl
    def zeroclaw_eval_register_tools(
        self, register: Callable[[str, Callable[[], Tool]], None]
    ) -> None:
        del register  # registers none: a hook may register nothing


@pytest.fixture(scope="module")
def acme() -> Registry:
    return registry_with(("acme", AcmePlugin()))


PLUGIN_REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    "strict_int": ({"retries": "2"}, 'expects.retries="2"', "must be an integer, not a string"),
    "strict_int_not_bool": (
        {"retries": True},
        "expects.retries=true",
        "must be an integer, not a boolean",
    ),
    "strict_str": ({"file_written": [{"path": 3}]}, "expects.file_written[0].path=3", "string"),
    "unknown_key_in_params_model": (
        {"file_written": [{"path": "a.txt", "min_bytes": 1}]},
        "expects.file_written[0].min_bytes=1",
        "unknown key",
    ),
    "empty_string_in_plain_str": (
        {"mentions": ["ok", ""]},
        'expects.mentions[1]=""',
        "must not be empty (an empty string matches anything)",
    ),
    "empty_string_in_params_model": (
        {"file_written": [{"path": ""}]},
        'expects.file_written[0].path=""',
        "must not be empty",
    ),
    "own_rule": (
        {"file_written": [{"path": "a"}, {"path": "/etc/passwd"}]},
        'expects.file_written[1].path="/etc/passwd"',
        "must be relative to the workspace",
    ),
    "produces_no_check": (  # the plugin's defect, not an empty expects
        {"silent": ["anything"]},
        "expects.silent",
        "family 'silent' of plugin 'acme' returned no check for a declared entry: "
        "a defect of that plugin",
    ),
    "produces_no_check_beside_a_good_family": (
        {"silent": ["anything"], "mentions": ["ok"]},
        "expects.silent",
        "a defect of that plugin (grade() must return one check per entry), not of this fixture",
    ),
    "empty_entry_of_a_silent_family_is_an_empty_expects": (
        {"silent": []},
        "expects",
        "declares nothing that would produce a check",
    ),
    "only_empty_lists": (
        {"mentions": [], "file_written": []},
        "expects",
        "declares nothing that would produce a check",
    ),
    "rules_raise": (
        {"broken_rules": ["x"]},
        "expects.broken_rules",
        "family 'broken_rules' of plugin 'acme' failed during admission: TypeError: oops",
    ),
}


@pytest.mark.parametrize(
    ("expects", "field", "says"), PLUGIN_REFUSALS.values(), ids=PLUGIN_REFUSALS.keys()
)
def test_a_plugin_family_gets_the_same_admission(
    expects: dict[str, Any],
    field: str,
    says: str,
    acme: Registry,
    replay: RunMode,
    write_case: Callable[..., Path],
) -> None:
    path = write_case(echo_case(expects=expects))
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, acme, replay)
    assert (refused.value.source, refused.value.field) == (str(path), field)
    assert says in refused.value.message


def test_a_plugin_family_may_allow_empty_strings(
    acme: Registry, replay: RunMode, write_case: Callable[..., Path]
) -> None:
    case = admit_file(write_case(echo_case(expects={"tagged": [""]})), acme, replay)
    assert [e.plugin for e in case.expectations] == ["acme"]


def test_plugin_and_built_in_families_are_admitted_together(
    acme: Registry, replay: RunMode, write_case: Callable[..., Path]
) -> None:
    expects = {"file_written": [{"path": "out.txt"}], "retries": 1, "exact_tool_calls": 1}
    case = admit_file(write_case(echo_case(expects=expects)), acme, replay)
    assert [(e.name, e.plugin) for e in case.expectations] == [
        ("file_written", "acme"),
        ("retries", "acme"),
        ("exact_tool_calls", "tools"),
    ]


def family_of(params: Any) -> Family[Any]:
    class Custom(Family[Any]):
        name = "custom"

        def grade(self, params: Any, run: RunRecord) -> list[CheckResult]:
            return [CheckResult(self.name, False, "no")]

    Custom.params = params
    return Custom()


@pytest.mark.parametrize(
    ("params", "lax"),
    [
        (list[LaxModel], "LaxModel"),
        (LaxDict, "LaxDict"),
        (dict[str, list[LaxModel]], "LaxModel"),
    ],
    ids=["model", "typed_dict", "nested"],
)
def test_a_family_whose_parameters_accept_unknown_keys_is_refused(params: Any, lax: str) -> None:
    plugin = Registers("zeroclaw_eval_register_families", (family_of(params),))
    with pytest.raises(PluginLoadError) as refused:
        registry_with(("lax-plugin", plugin))
    assert str(refused.value) == (
        f"plugin 'lax-plugin' registered family 'custom' whose parameters accept unknown "
        f'keys ({lax}): build them on zeroclaw_eval.Params, or set extra="forbid"'
    )


@pytest.mark.parametrize("params", [list[Entry], Forbidding, dict[str, int], list[str]])
def test_parameters_that_refuse_unknown_keys_are_accepted(params: Any) -> None:
    plugin = Registers("zeroclaw_eval_register_families", (family_of(params),))
    assert registry_with(("strict-plugin", plugin)).families["custom"].plugin == "strict-plugin"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Unsaid(_Strict):
    """Parameters whose validator raises pydantic's error types itself, without the
    location or context pydantic gives its own."""

    word: str

    @model_validator(mode="after")
    def refuse(self) -> Unsaid:
        if self.word == "extra":
            raise PydanticCustomError("extra_forbidden", "no extra words here")
        if self.word == "tag":
            raise PydanticCustomError("union_tag_invalid", "no such tag here")
        return self


class Circle(_Strict):
    kind: Literal["circle"]


class Square(_Strict):
    kind: Literal["square"]


class Shapes(_Strict):
    shapes: list[Annotated[Union[Circle, Square], Field(discriminator="kind")]]  # noqa: UP007


class Defaults(_Strict):
    """Strict, with a default that looks like a pydantic schema node of a model."""

    shape: dict[str, str] = {"type": "model"}
    again: list[dict[str, str]] = [{"type": "typed-dict"}]
    shown: str = Field("x", json_schema_extra={"type": "dataclass"})


def self_made(ref: str | None) -> Any:
    """A type that builds its own core schema: a typed dict with no config, no class."""

    class SelfMade:
        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
            field = core_schema.typed_dict_field(core_schema.str_schema())
            return core_schema.typed_dict_schema({"path": field}, ref=ref)

    return SelfMade


def named_family(name: str, params: Any) -> Family[Any]:
    family = family_of(params)
    family.name = name
    return family


@pytest.fixture(scope="module")
def unsaid() -> Registry:
    families = (named_family("unsaid", Unsaid), named_family("shapes", Shapes))
    return registry_with(
        ("unsaid", Registers("zeroclaw_eval_register_families", *[(f,) for f in families]))
    )


@pytest.mark.parametrize(
    ("expects", "field", "message"),
    [
        ({"unsaid": {"word": "extra"}}, "expects.unsaid", "unknown key"),
        ({"unsaid": {"word": "tag"}}, "expects.unsaid", "no such tag here"),
        (
            {"shapes": {"shapes": [{"kind": "circle"}, {"kind": "oval"}]}},
            'expects.shapes.shapes[1].kind="oval"',
            "unknown kind (expected one of: 'circle', 'square')",
        ),
    ],
    ids=["extra-without-location", "tag-without-context", "a-plugin-union"],
)
def test_a_plugin_validators_own_error_types_are_refused_cleanly(
    expects: dict[str, Any],
    field: str,
    message: str,
    unsaid: Registry,
    replay: RunMode,
    write_case: Callable[..., Path],
) -> None:
    """A validator may raise extra_forbidden with no location, union_tag_invalid with
    no context: a refusal in its own words, never an IndexError or AttributeError."""
    path = write_case(echo_case(expects=expects))
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, unsaid, replay)
    assert (refused.value.field, refused.value.message) == (field, message)


def test_a_strict_family_whose_default_looks_like_a_schema_node_is_accepted() -> None:
    plugin = Registers("zeroclaw_eval_register_families", (family_of(Defaults),))
    assert registry_with(("strict-plugin", plugin)).families["custom"].plugin == "strict-plugin"


@pytest.mark.parametrize(
    ("ref", "named"),
    [("self-made", "a typed-dict schema self-made"), (None, "a typed-dict schema")],
)
def test_a_self_made_schema_with_no_config_is_refused_by_what_it_is(
    ref: str | None, named: str
) -> None:
    plugin = Registers("zeroclaw_eval_register_families", (family_of(self_made(ref)),))
    with pytest.raises(PluginLoadError) as refused:
        registry_with(("self-made", plugin))
    assert f"accept unknown keys ({named}):" in str(refused.value)


class Vibes(Mentions):
    """A family that says it reads evidence no agent knows of."""

    name = "vibes"

    def evidence(self, params: list[str]) -> frozenset[str]:
        return frozenset({"response", "vibes"})


def test_a_family_reading_evidence_outside_the_known_kinds_is_the_plugins_defect(
    replay: RunMode, write_case: Callable[..., Path]
) -> None:
    """An agent refuses what it cannot observe by these names: a kind none knows would
    slip past every agent's refusal, so the entry is refused as the plugin's bug."""
    registry = registry_with(("moody", Registers("zeroclaw_eval_register_families", (Vibes(),))))
    path = write_case(echo_case(expects={"vibes": ["hi"]}))
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay)
    assert (refused.value.field, refused.value.message) == (
        "expects.vibes",
        "family 'vibes' of plugin 'moody' reads evidence vibes, not among answers, arguments, "
        "calls, requests, response, results, status, usage: a defect of that plugin, not of "
        "this fixture",
    )


class Everything(Mentions):
    """A family that reads every kind of evidence there is."""

    name = "everything"

    def evidence(self, params: list[str]) -> frozenset[str]:
        return EVIDENCE


def test_a_family_reading_every_known_kind_of_evidence_is_admitted(
    registry: Registry, replay: RunMode, write_case: Callable[..., Path]
) -> None:
    """By a mode that can show every kind (live); replay cannot show the usage a
    provider reports, and refuses the family for it."""
    everything = registry_with(
        ("all", Registers("zeroclaw_eval_register_families", (Everything(),)))
    )
    path = write_case(echo_case(expects={"everything": ["hi"]}))
    case = admit_file(path, everything, registry.modes["live"].obj)
    assert [e.name for e in case.expectations] == ["everything"]
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, everything, replay)
    assert refused.value.message.startswith(
        "mode 'replay' cannot certify this family: replay serves the script's token counts"
    )


def test_a_family_that_declares_no_evidence_is_admitted_for_any_agent(
    acme: Registry, replay: RunMode, write_case: Callable[..., Path]
) -> None:
    class Blind:
        label = "blind"
        unobservable: Mapping[str, str] = MappingProxyType(dict.fromkeys(EVIDENCE, "unseen"))

        def admit(self, trace: Any) -> Iterable[Problem]:
            return ()

    path = write_case(echo_case(expects={"mentions": ["hi"]}))
    case = admit_file(path, acme, replay, agent=Blind())  # type: ignore[arg-type]
    assert [e.name for e in case.expectations] == ["mentions"]


class Mixed(Mentions):
    """A family whose one entry yields a check a run doing nothing passes, and one it fails."""

    name = "mixed"

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return [CheckResult("mixed: quiet", True, "ok"), CheckResult("mixed: said", False, "no")]


def test_one_check_a_run_doing_nothing_fails_is_enough_to_make_a_case_not_vacuous(
    replay: RunMode, write_case: Callable[..., Path]
) -> None:
    from zeroclaw_eval.case.suite import vacuity

    registry = registry_with(("mix", Registers("zeroclaw_eval_register_families", (Mixed(),))))
    case = admit_file(write_case(echo_case(expects={"mixed": ["x"]})), registry, replay)
    assert case.idle_fails is True
    assert vacuity(case) is None
