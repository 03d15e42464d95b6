"""The typed view of what the plugins provide: name -> family, formatter, mode, tool, agent,
dialect.

Callers use this instead of the untyped hook relay. Each object is kept with the
name of the plugin that registered it; a name two plugins claim is an error naming
both, so a third-party family can never silently replace a built-in one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

import pluggy
from pydantic import BaseModel

from zeroclaw_eval.agents.base import AgentUnderTest
from zeroclaw_eval.agents.dialect import Dialect
from zeroclaw_eval.errors import PluginLoadError
from zeroclaw_eval.grading.family import Family, lax_parameter_types
from zeroclaw_eval.modes.base import RunMode
from zeroclaw_eval.protocol import Tool
from zeroclaw_eval.report.formatter import Formatter

T = TypeVar("T")

KINDS = ("families", "formatters", "modes", "tools", "agents", "dialects")
"""The kinds of object plugins register, as :meth:`Registry.provided_by` names them."""


class Registered(Generic[T]):
    """An object a plugin registered, with the plugin's name.

    A deferred one (:meth:`deferred`) is made by its loader the first time ``obj``
    is read, and checked then as it would have been at registration.
    """

    # A plain class: one is made per registration on every run, and a frozen
    # dataclass costs six generated methods, compiled at import.
    __slots__ = ("_load", "_obj", "name", "plugin")

    def __init__(self, name: str, obj: T, plugin: str) -> None:
        self.name = name
        self._obj = obj
        self._load: Callable[[], T] | None = None
        self.plugin = plugin

    @classmethod
    def deferred(cls, name: str, load: Callable[[], T], plugin: str) -> Registered[T]:
        """An entry whose object ``load`` makes on first use."""
        entry: Registered[T] = cls.__new__(cls)
        entry.name, entry.plugin, entry._load = name, plugin, load
        return entry

    @property
    def obj(self) -> T:
        """The registered object (made now, if it was deferred)."""
        if self._load is not None:
            self._obj = self._load()
            self._load = None
        return self._obj

    def __repr__(self) -> str:
        shown = "deferred" if self._load is not None else repr(self._obj)
        return f"Registered({self.name!r}, {shown}, plugin={self.plugin!r})"


class DeferredFamily(NamedTuple):
    """A family registered by name, its module imported when a case first names it.

    ``load`` returns the family (a :class:`~zeroclaw_eval.grading.family.Family`
    named ``name``); it is checked then exactly as a family registered whole is at
    load. The plugin manager registers the built-in families this way
    (:data:`~zeroclaw_eval.plugins.manager.FAMILY_MODULES`), so a run imports only
    the families its cases use.
    """

    name: str
    load: Callable[[], Any]


@dataclass(frozen=True)
class Registry:
    """Everything the loaded plugins registered, by kind and name."""

    families: Mapping[str, Registered[Family[Any]]] = field(default_factory=dict)
    formatters: Mapping[str, Registered[Formatter]] = field(default_factory=dict)
    modes: Mapping[str, Registered[RunMode]] = field(default_factory=dict)
    tools: Mapping[str, Registered[Callable[[], Tool]]] = field(default_factory=dict)
    agents: Mapping[str, Registered[AgentUnderTest]] = field(default_factory=dict)
    dialects: Mapping[str, Registered[Dialect]] = field(default_factory=dict)
    blocked: tuple[str, ...] = ()
    """The plugins that were blocked, never loaded: whatever they provide is missing."""
    settings: Mapping[str, Registered[PluginSettings]] = field(default_factory=dict)
    """Each plugin's settings model and the callable its validated table goes to,
    by plugin name (``[eval.plugins.NAME]``)."""

    @classmethod
    def from_plugin_manager(cls, pm: pluggy.PluginManager) -> Registry:
        """Call every registration hook once and index what comes back."""
        families: dict[str, Registered[Family[Any]]] = {}
        formatters: dict[str, Registered[Formatter]] = {}
        modes: dict[str, Registered[RunMode]] = {}
        tools: dict[str, Registered[Callable[[], Tool]]] = {}

        for plugin, args in _each(pm, "zeroclaw_eval_register_families"):
            if len(args) == 1 and isinstance(args[0], DeferredFamily):
                name, load = args[0]
                _add_entry(families, "family", _deferred_family(name, load, plugin))
                continue
            family = _one_named(args, Family, "family", plugin)
            _check_params(family, plugin)
            _add(families, "family", family.name, family, plugin)
        for plugin, args in _each(pm, "zeroclaw_eval_register_formatters"):
            formatter = _one_named(args, Formatter, "formatter", plugin)
            _add(formatters, "formatter", formatter.name, formatter, plugin)
        for plugin, args in _each(pm, "zeroclaw_eval_register_modes"):
            mode = _one_named(args, RunMode, "run mode", plugin)
            _add(modes, "run mode", mode.name, mode, plugin)
        for plugin, args in _each(pm, "zeroclaw_eval_register_tools"):
            if (
                len(args) != 2
                or not isinstance(args[0], str)
                or not args[0]
                or not callable(args[1])
            ):
                raise PluginLoadError(
                    f"plugin {plugin!r} registered a tool as {args!r}; "
                    "expected register(name, factory)"
                )
            _add(tools, "tool", args[0], args[1], plugin)
        agents: dict[str, Registered[AgentUnderTest]] = {}
        for plugin, args in _each(pm, "zeroclaw_eval_register_agents"):
            agent = _one_named(args, AgentUnderTest, "agent", plugin)
            _add(agents, "agent", agent.name, agent, plugin)
        dialects: dict[str, Registered[Dialect]] = {}
        for plugin, args in _each(pm, "zeroclaw_eval_register_dialects"):
            dialect = _one_named(args, Dialect, "dialect", plugin)
            _add(dialects, "dialect", dialect.name, dialect, plugin)
        blocked = tuple(sorted(name for name, plugin in pm.list_name_plugin() if plugin is None))
        settings: dict[str, Registered[PluginSettings]] = {}
        for plugin, args in _each(pm, "zeroclaw_eval_register_settings"):
            if plugin in settings:
                raise PluginLoadError(f"plugin {plugin!r} registered its settings twice")
            settings[plugin] = Registered(plugin, _settings(args, plugin), plugin)
        return cls(families, formatters, modes, tools, agents, dialects, blocked, settings)

    def family(self, name: str) -> Registered[Family[Any]] | None:
        """The family a fixture's ``expects`` key names, if one is registered."""
        return self.families.get(name)

    def provided_by(self, plugin: str) -> dict[str, list[str]]:
        """What ``plugin`` registered, by kind (see :data:`KINDS`), names sorted."""
        tables: dict[str, Mapping[str, Registered[Any]]] = {
            "families": self.families,
            "formatters": self.formatters,
            "modes": self.modes,
            "tools": self.tools,
            "agents": self.agents,
            "dialects": self.dialects,
        }
        return {
            kind: sorted(name for name, entry in tables[kind].items() if entry.plugin == plugin)
            for kind in KINDS
        }

    def make_tools(self) -> dict[str, Tool]:
        """Fresh tool instances for one case, keyed by tool name."""
        return {name: entry.obj() for name, entry in self.tools.items()}


def _each(pm: pluggy.PluginManager, hook_name: str) -> list[tuple[str, tuple[Any, ...]]]:
    """Call one registration hook plugin by plugin, attributing each registration.

    pluggy's relay would merge all implementations into one call and lose who
    registered what; calling each implementation with its own ``register`` keeps
    the attribution that duplicate-name errors and ``zeroclaw eval plugins`` need.
    A hook wrapper has nothing to wrap in a registration hook, so one is refused:
    skipping it would drop whatever it meant to register, silently.
    """
    found: list[tuple[str, tuple[Any, ...]]] = []
    hook = getattr(pm.hook, hook_name)
    # get_hookimpls() lists first-registered first: built-ins before entry points.
    for impl in hook.get_hookimpls():
        plugin = impl.plugin_name
        if impl.hookwrapper or impl.wrapper:
            raise PluginLoadError(
                f"plugin {plugin!r} implements {hook_name} as a hook wrapper; "
                "registration hooks take plain implementations only (drop "
                "wrapper=True / hookwrapper=True and call register)"
            )

        def register(*args: Any, _plugin: str = plugin) -> None:
            found.append((_plugin, args))

        kwargs = {"register": register}
        try:
            impl.function(**{name: kwargs[name] for name in impl.argnames})
        except PluginLoadError:
            raise
        except Exception as exc:
            raise PluginLoadError(
                f"plugin {plugin!r} failed in {hook_name}: {type(exc).__name__}: {exc}"
            ) from exc
    return found


@dataclass(frozen=True)
class PluginSettings:
    """What a plugin declared of its settings: the model its table is validated
    against, and the callable the validated model is handed to."""

    model: type[BaseModel]
    configure: Callable[[BaseModel], None]


def _settings(args: tuple[Any, ...], plugin: str) -> PluginSettings:
    model = args[0] if args else None
    if (
        len(args) != 2
        or not isinstance(model, type)
        or not issubclass(model, BaseModel)
        or not callable(args[1])
    ):
        raise PluginLoadError(
            f"plugin {plugin!r} registered settings as {args!r}; expected "
            "register(model, configure) with a pydantic model class and a callable"
        )
    return PluginSettings(model, args[1])


def _one_named(args: tuple[Any, ...], kind: type, label: str, plugin: str) -> Any:
    """The single object a registration passed, checked to be a named ``kind``."""
    obj = args[0] if len(args) == 1 else args
    if not isinstance(obj, kind) or not isinstance(getattr(obj, "name", None), str):
        raise PluginLoadError(
            f"plugin {plugin!r} registered {obj!r} as {_a(label)}; "
            f"expected one named {kind.__module__}.{kind.__name__} instance"
        )
    if not getattr(obj, "name", ""):
        raise PluginLoadError(f"plugin {plugin!r} registered {_a(label)} with an empty name")
    return obj


def _a(label: str) -> str:
    """``label`` with its indefinite article: ``a family``, ``an agent``."""
    return f"{'an' if label[0] in 'aeiou' else 'a'} {label}"


def _check_params(family: Family[Any], plugin: str) -> None:
    """A family's parameter type must be buildable and must refuse unknown keys."""
    try:
        lax = lax_parameter_types(family)
    except Exception as exc:
        raise PluginLoadError(
            f"plugin {plugin!r} registered family {family.name!r} with an invalid params "
            f"type: {type(exc).__name__}: {exc}"
        ) from exc
    if lax:
        raise PluginLoadError(
            f"plugin {plugin!r} registered family {family.name!r} whose parameters "
            f"accept unknown keys ({', '.join(lax)}): build them on "
            'zeroclaw_eval.Params, or set extra="forbid"'
        )


def _deferred_family(name: str, load: Callable[[], Any], plugin: str) -> Registered[Family[Any]]:
    def made() -> Family[Any]:
        try:
            loaded = load()
        except PluginLoadError:
            raise
        except Exception as exc:
            raise PluginLoadError(
                f"plugin {plugin!r} failed to load family {name!r}: {type(exc).__name__}: {exc}"
            ) from exc
        family: Family[Any] = _one_named((loaded,), Family, "family", plugin)
        if family.name != name:
            raise PluginLoadError(
                f"plugin {plugin!r} deferred family {name!r}, but its loader made "
                f"family {family.name!r}"
            )
        _check_params(family, plugin)
        return family

    return Registered.deferred(name, made, plugin)


def _add(table: dict[str, Registered[T]], label: str, name: str, obj: T, plugin: str) -> None:
    _add_entry(table, label, Registered(name, obj, plugin))


def _add_entry(table: dict[str, Registered[T]], label: str, entry: Registered[T]) -> None:
    if entry.name in table:
        raise PluginLoadError(
            f"{label} {entry.name!r} is registered by both plugin "
            f"{table[entry.name].plugin!r} and plugin {entry.plugin!r}"
        )
    table[entry.name] = entry
