"""Families registered by name and made on first use: the built-in family modules
are imported only when a case names one of their families, and a deferred family
is held to the same checks as one registered whole.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from zeroclaw_eval import Family, RunRecord
from zeroclaw_eval.errors import PluginLoadError
from zeroclaw_eval.plugins.manager import DEFAULT_PLUGINS, FAMILY_MODULES
from zeroclaw_eval.plugins.registry import DeferredFamily
from zeroclaw_eval.report.model import CheckResult
from zeroclaw_eval.testing import fixture, write_fixture

from .test_registry import Registers, registry_with


def registered_by(module: Any) -> list[str]:
    names: list[str] = []
    module.zeroclaw_eval_register_families(register=lambda family: names.append(family.name))
    return names


def test_the_table_of_family_modules_says_what_each_module_registers() -> None:
    # Every default plugin that implements the families hook and no other is in
    # the table, with the names its hook registers, in its order.
    only_families = {}
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)
        hooks = sorted(attr for attr in vars(module) if attr.startswith("zeroclaw_eval_"))
        if hooks == ["zeroclaw_eval_register_families"]:
            only_families[name] = tuple(registered_by(module))
    assert dict(FAMILY_MODULES) == only_families


def test_a_run_imports_the_family_modules_its_cases_use_and_no_other(tmp_path: Path) -> None:
    # In a fresh interpreter: a case with a response check and a tool sequence runs,
    # and only the modules of those families (and what they import) are loaded.
    case = fixture(
        {
            "response_contains": ["hello"],
            "tool_sequence": [{"mode": "exact", "steps": [{"tool": "echo"}]}],
        },
        tool_calls=[("echo", {"message": "hello"})],
        response="hello",
    )
    path = write_fixture(tmp_path / "suite", case)
    code = (
        "import sys\n"
        "from zeroclaw_eval.cli import main\n"
        "try:\n"
        f"    main(['eval', 'run', '--no-history', {str(path)!r}])\n"
        "except SystemExit as exit:\n"
        "    code = exit.code\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('zeroclaw_eval.builtin.'))\n"
        "print(__import__('json').dumps([code, loaded]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    code_, loaded = json.loads(result.stdout.splitlines()[-1])
    assert code_ == 0, result.stdout + result.stderr
    families = {module for module in FAMILY_MODULES if module in loaded}
    # sequence's own imports bring tools; nothing brings the others.
    assert families == {
        "zeroclaw_eval.builtin.response",
        "zeroclaw_eval.builtin.sequence",
        "zeroclaw_eval.builtin.tools",
    }


class Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")
    word: str


class LooseFamily(Family[Loose]):
    name = "loose"
    params = Loose

    def grade(self, params: Loose, run: RunRecord) -> list[CheckResult]:
        return [CheckResult(self.name, False, "never")]


class Strict(LooseFamily):
    name = "strict"
    params = list[str]


def deferred(name: str, load: Any) -> Registers:
    return Registers("zeroclaw_eval_register_families", (DeferredFamily(name, load),))


def test_a_deferred_family_is_made_once_on_first_use() -> None:
    made: list[str] = []

    def load() -> Family[Any]:
        made.append("strict")
        return Strict()

    registry = registry_with(("lazy", deferred("strict", load)))
    entry = registry.families["strict"]
    assert (entry.name, entry.plugin, made) == ("strict", "lazy", [])
    assert "deferred" in repr(entry)
    assert isinstance(registry.family("strict").obj, Strict)  # type: ignore[union-attr]
    assert entry.obj is entry.obj
    assert made == ["strict"]


@pytest.mark.parametrize(
    ("name", "load", "message"),
    [
        (
            "loose",
            LooseFamily,
            "plugin 'lazy' registered family 'loose' whose parameters accept unknown keys",
        ),
        (
            "other",
            Strict,
            "plugin 'lazy' deferred family 'other', but its loader made family 'strict'",
        ),
        ("strict", lambda: "not a family", "plugin 'lazy' registered 'not a family' as a family"),
        (
            "strict",
            lambda: importlib.import_module("no_such_module_here"),
            "plugin 'lazy' failed to load family 'strict': ModuleNotFoundError",
        ),
    ],
    ids=["lax-params", "wrong-name", "not-a-family", "import-fails"],
)
def test_a_deferred_family_is_checked_on_first_use_as_a_registered_one(
    name: str, load: Any, message: str
) -> None:
    registry = registry_with(("lazy", deferred(name, load)))
    with pytest.raises(PluginLoadError) as refused:
        registry.families[name].obj  # noqa: B018 (the read makes it)
    assert str(refused.value).startswith(message)


def test_a_deferred_name_clashes_like_a_registered_one() -> None:
    with pytest.raises(PluginLoadError) as refused:
        registry_with(("lazy", deferred("tool_sequence", Strict)))
    assert str(refused.value) == (
        "family 'tool_sequence' is registered by both plugin 'sequence' and plugin 'lazy'"
    )


def _hookable_module() -> Any:
    """A module holding every kind of attribute pluggy may or may not take."""
    import types

    from zeroclaw_eval import hookimpl

    module = types.ModuleType("every_kind")

    @hookimpl
    def zeroclaw_eval_register_tools(register: Any) -> None: ...

    @hookimpl(specname="zeroclaw_eval_register_modes")
    def named_otherwise(register: Any) -> None: ...

    class Holder:
        @staticmethod
        @hookimpl
        def zeroclaw_eval_register_agents(register: Any) -> None: ...

        @hookimpl
        def zeroclaw_eval_register_dialects(self, register: Any) -> None: ...

    def unmarked(register: Any) -> None: ...

    module.__dict__.update(
        zeroclaw_eval_register_tools=zeroclaw_eval_register_tools,
        named_otherwise=named_otherwise,
        static=Holder.__dict__["zeroclaw_eval_register_agents"],
        bound=Holder().zeroclaw_eval_register_dialects,
        unmarked=unmarked,
        Holder=Holder,
        CONSTANT=3,
        nothing=None,
        builtin=len,
    )
    return module


def test_the_manager_finds_exactly_the_hook_implementations_pluggy_finds() -> None:
    # The manager answers for a module's plain names itself; for every attribute
    # of every built-in module, and of a module holding every kind pluggy takes,
    # the answer is pluggy's own.
    import pluggy

    from zeroclaw_eval.plugins.manager import PluginManager

    ours = PluginManager()
    modules = [importlib.import_module(name) for name in DEFAULT_PLUGINS]
    found = 0
    for module in [*modules, _hookable_module()]:
        for attr in dir(module):
            expected = pluggy.PluginManager.parse_hookimpl_opts(ours, module, attr)
            assert ours.parse_hookimpl_opts(module, attr) == expected, (module, attr)
            found += expected is not None
    # Each built-in implements one hook; the made-up module four, of every kind.
    assert found == len(DEFAULT_PLUGINS) + 4


# --- what the registry refuses at load, kind by kind --------------------------------


class Nameless(Strict):
    name = ""


class NotAType(Strict):
    name = "not_a_type"
    params = 42  # pydantic cannot build a validator for this


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")


@pytest.mark.parametrize(
    ("hook", "registrations", "message"),
    [
        (
            "zeroclaw_eval_register_families",
            [(Nameless(),)],
            "plugin 'p' registered a family with an empty name",
        ),
        (
            "zeroclaw_eval_register_families",
            [(object(),)],
            "plugin 'p' registered <object",
        ),
        (
            "zeroclaw_eval_register_families",
            [(DeferredFamily("deferred", Strict), "more")],
            "plugin 'p' registered (DeferredFamily(name='deferred'",
        ),
        (
            "zeroclaw_eval_register_families",
            [(NotAType(),)],
            "plugin 'p' registered family 'not_a_type' with an invalid params type: ",
        ),
        ("zeroclaw_eval_register_modes", [("mode",)], "plugin 'p' registered 'mode' as a run mode"),
        ("zeroclaw_eval_register_agents", [(3,)], "plugin 'p' registered 3 as an agent"),
        ("zeroclaw_eval_register_dialects", [(3,)], "plugin 'p' registered 3 as a dialect"),
        (
            "zeroclaw_eval_register_tools",
            [(3, lambda: None)],
            "plugin 'p' registered a tool as (3, ",
        ),
        (
            "zeroclaw_eval_register_tools",
            [("", lambda: None)],
            "plugin 'p' registered a tool as ('', ",
        ),
        (
            "zeroclaw_eval_register_tools",
            [("tool", "not callable")],
            "plugin 'p' registered a tool as ('tool', 'not callable')",
        ),
        (
            "zeroclaw_eval_register_settings",
            [(Settings, print), (Settings, print)],
            "plugin 'p' registered its settings twice",
        ),
    ],
    ids=[
        "nameless-family",
        "not-a-family",
        "deferred-with-more",
        "params-no-validator",
        "not-a-mode",
        "not-an-agent",
        "not-a-dialect",
        "tool-name-not-text",
        "tool-name-empty",
        "tool-not-callable",
        "settings-twice",
    ],
)
def test_each_kind_refuses_a_registration_it_cannot_use_naming_the_plugin(
    hook: str, registrations: list[tuple[Any, ...]], message: str
) -> None:
    with pytest.raises(PluginLoadError) as refused:
        registry_with(("p", Registers(hook, *registrations)))
    assert str(refused.value).startswith(message)


def test_a_loaders_own_load_error_is_kept_as_it_said_it() -> None:
    def load() -> Family[Any]:
        raise PluginLoadError("the family's data file is missing")

    registry = registry_with(("lazy", deferred("strict", load)))
    with pytest.raises(PluginLoadError) as refused:
        registry.families["strict"].obj  # noqa: B018 (the read makes it)
    assert str(refused.value) == "the family's data file is missing"


def test_the_blocked_plugins_are_the_registrys_blocked() -> None:
    assert registry_with(blocked=["sequence", "counts"]).blocked == ("counts", "sequence")


def test_a_module_that_does_not_register_a_family_it_is_said_to_is_named() -> None:
    # The table named a family its module does not register (beside a nameless one).
    import types

    from zeroclaw_eval import hookimpl
    from zeroclaw_eval.plugins.manager import DeferredFamilies

    module = types.ModuleType("short_module")

    @hookimpl
    def zeroclaw_eval_register_families(register: Any) -> None:
        register(Strict())
        register(object())

    module.zeroclaw_eval_register_families = zeroclaw_eval_register_families  # type: ignore[attr-defined]
    sys.modules["short_module"] = module
    try:
        plugin = DeferredFamilies("short_module", ("strict", "missing"))
        assert isinstance(plugin.family("strict"), Strict)
        with pytest.raises(PluginLoadError) as refused:
            plugin.family("missing")
        assert str(refused.value) == "short_module registers no family 'missing'"
    finally:
        del sys.modules["short_module"]


def test_a_plugin_passed_in_process_is_not_built_in_and_a_blocked_one_skips_only_itself() -> None:
    from zeroclaw_eval.plugins.manager import get_plugin_manager

    first, second = (
        Registers("zeroclaw_eval_register_families"),
        Registers("zeroclaw_eval_register_families"),
    )
    first.__name__ = "first"  # type: ignore[attr-defined]
    second.__name__ = "second"  # type: ignore[attr-defined]
    pm = get_plugin_manager(
        blocked=["first"], plugins=[first, second], load_entry_points=False, environ={}
    )
    assert not pm.has_plugin("first") and pm.has_plugin("second")
    assert pm.origins["second"].builtin is False
    assert pm.origins["sequence"].builtin is True


class Unnamed(Family[list[str]]):
    """A family class that never set its name."""

    params = list[str]

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return []


class Numbered(Unnamed):
    name = 3  # type: ignore[assignment]


@pytest.mark.parametrize("family", [Unnamed(), Numbered()], ids=["no-name", "name-not-text"])
def test_a_family_without_a_name_of_text_is_refused_not_a_traceback(family: Family[Any]) -> None:
    with pytest.raises(PluginLoadError) as refused:
        registry_with(("p", Registers("zeroclaw_eval_register_families", (family,))))
    assert str(refused.value).startswith(f"plugin 'p' registered {family!r} as a family; ")


@pytest.mark.parametrize(
    ("hook", "existing", "label"),
    [
        ("zeroclaw_eval_register_agents", "reference", "agent"),
        ("zeroclaw_eval_register_dialects", "smolagents", "dialect"),
    ],
)
def test_an_agent_or_a_dialect_named_twice_names_both_plugins(
    hook: str, existing: str, label: str
) -> None:
    registry = registry_with()
    original = getattr(registry, f"{label}s")[existing]
    with pytest.raises(PluginLoadError) as refused:
        registry_with(("p", Registers(hook, (original.obj,))))
    assert str(refused.value) == (
        f"{label} {existing!r} is registered by both plugin {original.plugin!r} and plugin 'p'"
    )


def test_an_in_process_plugin_that_cannot_be_registered_is_named() -> None:
    from zeroclaw_eval import hookimpl
    from zeroclaw_eval.plugins.manager import get_plugin_manager

    class Wrong:
        __name__ = "wrong"

        @hookimpl
        def zeroclaw_eval_register_families(self, register: Any, extra: Any) -> None: ...

    with pytest.raises(PluginLoadError) as refused:
        get_plugin_manager(plugins=[Wrong()], load_entry_points=False, environ={})
    assert str(refused.value).startswith("plugin 'wrong' could not be registered: ")
