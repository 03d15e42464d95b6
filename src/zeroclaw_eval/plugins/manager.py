"""Building the plugin manager: built-ins first, then the ``zeroclaw_eval`` entry points.

Nothing happens at import time; every invocation builds its own manager. A plugin
that fails to load stops the run with an error naming its distribution and entry
point: silently skipping it would let fixtures that use its families pass
unchecked.
"""

from __future__ import annotations

import functools
import importlib
import os
import types
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, NamedTuple

import pluggy

from zeroclaw_eval import hookspecs
from zeroclaw_eval.errors import PluginLoadError
from zeroclaw_eval.plugins.registry import DeferredFamily
from zeroclaw_eval.util.distinfo import name_and_version

#: The default plugins, registered in this order before any entry point.
#: Each is an ordinary plugin module using the public ``hookimpl`` marker.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "zeroclaw_eval.builtin.response",
    "zeroclaw_eval.builtin.tools",
    "zeroclaw_eval.builtin.dispatch",
    "zeroclaw_eval.builtin.sequence",
    "zeroclaw_eval.builtin.forbidden",
    "zeroclaw_eval.builtin.counts",
    "zeroclaw_eval.builtin.evidence",
    "zeroclaw_eval.builtin.dataflow",
    "zeroclaw_eval.builtin.callstatus",
    "zeroclaw_eval.builtin.budgets",
    "zeroclaw_eval.builtin.request_size",
    "zeroclaw_eval.builtin.model_side",
    "zeroclaw_eval.builtin.recovery",
    "zeroclaw_eval.builtin.text",
    "zeroclaw_eval.builtin.json",
    "zeroclaw_eval.builtin.github",
    "zeroclaw_eval.builtin.otel",
    "zeroclaw_eval.builtin.replay",
    "zeroclaw_eval.builtin.live",
    "zeroclaw_eval.builtin.echo",
    "zeroclaw_eval.builtin.reference",
    "zeroclaw_eval.builtin.dialects",
)

#: The default plugins that register families and nothing else, with the names of
#: their families, in the order each registers them. Such a module is imported when
#: a case first names one of its families (or when ``eval schema`` or ``eval plugins``
#: lists them): a run pays for the families its cases use, not for all of them.
#: Until then its plugin name stands for it, registered, blockable and listed like
#: any other; ``tests/test_deferred_families.py`` holds this table equal to what each
#: module registers.
FAMILY_MODULES: Mapping[str, tuple[str, ...]] = {
    "zeroclaw_eval.builtin.response": (
        "response_contains",
        "response_not_contains",
        "response_matches",
    ),
    "zeroclaw_eval.builtin.tools": (
        "tools_used",
        "tools_not_used",
        "max_tool_calls",
        "min_tool_calls",
        "exact_tool_calls",
        "all_tools_succeeded",
    ),
    "zeroclaw_eval.builtin.dispatch": ("tool_arguments_contain", "tool_results_contain"),
    "zeroclaw_eval.builtin.sequence": ("tool_sequence",),
    "zeroclaw_eval.builtin.forbidden": ("tool_calls_forbidden",),
    "zeroclaw_eval.builtin.counts": ("tool_call_counts",),
    "zeroclaw_eval.builtin.evidence": ("response_grounded", "response_claims_backed"),
    "zeroclaw_eval.builtin.dataflow": ("tool_data_flow",),
    "zeroclaw_eval.builtin.callstatus": ("tool_call_status",),
    "zeroclaw_eval.builtin.budgets": (
        "max_input_tokens",
        "max_cached_input_tokens",
        "max_reasoning_tokens",
        "max_output_tokens",
        "max_total_tokens",
        "max_cost",
    ),
    "zeroclaw_eval.builtin.request_size": ("max_request_chars", "max_total_request_chars"),
    "zeroclaw_eval.builtin.model_side": ("model_saw", "model_never_saw", "tools_offered"),
    "zeroclaw_eval.builtin.recovery": (
        "max_model_requests",
        "tool_calls_answered",
        "retry_after_respected",
    ),
}

DISABLE_PLUGINS_ENV = "ZEROCLAW_EVAL_DISABLE_PLUGINS"
"""Comma-separated plugin names never to import, like ``-p no:NAME`` for each."""

DISABLE_AUTOLOAD_ENV = "ZEROCLAW_EVAL_DISABLE_PLUGIN_AUTOLOAD"
"""When set to a non-empty value, no entry point is loaded: built-in plugins only."""


class PluginOrigin(NamedTuple):
    """Where a registered plugin came from: ``distribution`` is ``None`` for built-ins."""

    name: str
    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None
    builtin: bool = True
    """False for entry-point plugins and for plugin objects passed in by the caller."""


def builtin_name(module: str) -> str:
    """The plugin name of a default plugin module (``zeroclaw_eval.builtin.echo`` -> ``echo``)."""
    return module.rsplit(".", 1)[-1]


#: What a module attribute must be for pluggy to take it as a hook implementation,
#: besides a plain function: a bound method, a class or a static method.
_MAYBE_HOOKABLE = (types.MethodType, classmethod, staticmethod)


class PluginManager(pluggy.PluginManager):
    """A pluggy manager that also remembers where each plugin came from."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self._impl_marker = hookspecs.PROJECT_NAME + "_impl"
        self.add_hookspecs(hookspecs)
        self.origins: dict[str, PluginOrigin] = {}
        self.known_names: set[str] = set()
        """Every plugin name this manager came across, loaded or blocked: a name to
        block that is not among them blocks nothing."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        """pluggy's own answer, but for a module's plain names without asking it.

        pluggy inspects every name a plugin has (``inspect.getattr_static``); a
        module's classes, constants and imports are never hook implementations, and
        the built-ins alone hold hundreds of them, read on every run. A module
        attribute that is a plain function carries its marker or none; anything
        else that could be hookable goes to pluggy, so what is found is the same.
        """
        if isinstance(plugin, types.ModuleType):
            value = plugin.__dict__.get(name)
            if isinstance(value, types.FunctionType):
                opts = getattr(value, self._impl_marker, None)
                return opts if isinstance(opts, dict) else None
            if not isinstance(value, _MAYBE_HOOKABLE):
                return None
        return super().parse_hookimpl_opts(plugin, name)


def get_plugin_manager(
    *,
    blocked: Iterable[str] = (),
    load_entry_points: bool = True,
    plugins: Iterable[object] = (),
    environ: Mapping[str, str] | None = None,
) -> PluginManager:
    """A fresh plugin manager with the default plugins, then the ``plugins`` objects
    given here, then, unless disabled, every plugin of the ``zeroclaw_eval``
    entry-point group.

    Names in ``blocked`` are never imported. ``environ`` (default: ``os.environ``)
    adds the names listed in :data:`DISABLE_PLUGINS_ENV` and may turn entry points
    off with :data:`DISABLE_AUTOLOAD_ENV`; pass ``{}`` to ignore the environment.
    Raises :class:`PluginLoadError` when a plugin cannot be imported or registered.
    """
    env = os.environ if environ is None else environ
    pm = PluginManager()
    for name in (*blocked, *disabled_by_environment(env)):
        pm.set_blocked(name)
    if env.get(DISABLE_AUTOLOAD_ENV, ""):
        load_entry_points = False
    for module_name in DEFAULT_PLUGINS:
        name = builtin_name(module_name)
        pm.known_names.add(name)
        if pm.is_blocked(name):
            continue
        families = FAMILY_MODULES.get(module_name)
        builtin: object = (
            importlib.import_module(module_name)
            if families is None
            else DeferredFamilies(module_name, families)
        )
        _register(pm, builtin, name, f"built-in plugin {name!r}")
        pm.origins[name] = PluginOrigin(name)
    for plugin in plugins:
        name = pm.get_canonical_name(plugin)
        pm.known_names.add(name)
        if pm.is_blocked(name):
            continue
        _register(pm, plugin, name, f"plugin {name!r}")
        pm.origins[name] = PluginOrigin(name, builtin=False)
    if load_entry_points:
        for ep in _entry_points():
            pm.known_names.add(ep.name)
            # Checked before ep.load(): a blocked plugin is never imported, so
            # blocking is also the way around a plugin that breaks on import.
            if pm.is_blocked(ep.name):
                continue
            found, version = name_and_version(ep.dist) if ep.dist is not None else (None, None)
            dist = found or "unknown distribution"
            label = f"plugin {ep.name!r} (entry point {ep.name} = {ep.value}, distribution {dist})"
            try:
                plugin = ep.load()
            except Exception as exc:
                raise PluginLoadError(
                    f"{label} failed to load: {type(exc).__name__}: {exc}"
                ) from exc
            _register(pm, plugin, ep.name, label)
            pm.origins[ep.name] = PluginOrigin(ep.name, dist, version, ep.value, builtin=False)
    elif blocked:  # named, though not loaded: blocking one of them is not a typo
        pm.known_names.update(ep.name for ep in _entry_points())
    return pm


class DeferredFamilies:
    """A built-in plugin of :data:`FAMILY_MODULES`, standing in for its module.

    It registers each of the module's families by name
    (:class:`~zeroclaw_eval.plugins.registry.DeferredFamily`); the first one a case
    uses imports the module and calls its own ``zeroclaw_eval_register_families``,
    which the registry checks as it checks every registration.
    """

    def __init__(self, module: str, families: tuple[str, ...]) -> None:
        self.module = module
        self.families = families
        self._made: dict[str, object] | None = None

    @hookspecs.hookimpl
    def zeroclaw_eval_register_families(self, register: Any) -> None:
        for name in self.families:
            register(DeferredFamily(name, functools.partial(self.family, name)))

    def family(self, name: str) -> object:
        """The family ``name`` as the module registers it (the module imported once)."""
        if self._made is None:
            made: dict[str, object] = {}
            importlib.import_module(self.module).zeroclaw_eval_register_families(
                register=lambda family: made.setdefault(getattr(family, "name", ""), family)
            )
            self._made = made
        if name not in self._made:
            raise PluginLoadError(f"{self.module} registers no family {name!r}")
        return self._made[name]


def disabled_by_environment(environ: Mapping[str, str]) -> list[str]:
    """The plugin names :data:`DISABLE_PLUGINS_ENV` lists (blanks ignored)."""
    listed = environ.get(DISABLE_PLUGINS_ENV, "")
    return [name.strip() for name in listed.split(",") if name.strip()]


def blocked_from_options(values: Iterable[str]) -> list[str]:
    """The plugin names of ``-p no:NAME`` options. Raises :class:`ValueError` for
    any value that is not ``no:NAME``.
    """
    names = []
    for value in values:
        prefix, _, name = value.partition(":")
        if prefix != "no" or not name.strip():
            raise ValueError(f"{value!r}: expected no:NAME (the name of a plugin to block)")
        names.append(name.strip())
    return names


def _entry_points() -> list[EntryPoint]:
    # Sorted so that load order, and so any error, is the same on every machine.
    return sorted(entry_points(group=hookspecs.PROJECT_NAME), key=lambda ep: ep.name)


def _register(pm: PluginManager, plugin: object, name: str, label: str) -> None:
    if pm.has_plugin(name):
        raise PluginLoadError(f"{label}: another plugin is already registered as {name!r}")
    try:
        pm.register(plugin, name=name)
    except Exception as exc:
        raise PluginLoadError(f"{label} could not be registered: {exc}") from exc
