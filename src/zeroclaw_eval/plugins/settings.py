"""Plugin settings: each plugin's ``[eval.plugins.NAME]`` table, validated against the
model the plugin declared and handed to that plugin only.

A plugin declares its settings with ``zeroclaw_eval_register_settings``
(:class:`~zeroclaw_eval.plugins.registry.PluginSettings`); :func:`configure_plugins`
runs when a session opens, after the configuration and the plugins are loaded:
a table naming no plugin, or a plugin that declares no settings, is refused; a
table the model refuses is refused with the file and the key; and every plugin
that declared settings gets its validated model (its defaults when its table is
absent). The table of a blocked plugin is left alone: blocking it for one run
does not make its configuration wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError

from zeroclaw_eval.config import refusal
from zeroclaw_eval.errors import ConfigError, PluginLoadError
from zeroclaw_eval.util.wording import did_you_mean

if TYPE_CHECKING:
    from zeroclaw_eval.config import LoadedConfig
    from zeroclaw_eval.plugins.registry import Registry


def configure_plugins(loaded: LoadedConfig, registry: Registry) -> None:
    """Validate each ``[eval.plugins.NAME]`` table and hand it to its plugin.

    Raises :class:`~zeroclaw_eval.errors.ConfigError` naming the file and the key, and
    :class:`~zeroclaw_eval.errors.PluginLoadError` when a plugin's ``configure`` fails.
    """
    tables = loaded.config.plugins
    for name in tables:
        if name in registry.settings or name in registry.blocked:
            continue
        declared = ", ".join(sorted(registry.settings)) or "none"
        raise ConfigError(
            f"{loaded.field(f'plugins.{name}')}: no loaded plugin named {name!r} has "
            f"settings{did_you_mean(name, registry.settings)} (plugins with settings: "
            f"{declared})"
        )
    for name, entry in registry.settings.items():
        table = tables.get(name, {})
        try:
            settings = entry.obj.model.model_validate(table)
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = loaded.field(f"plugins.{name}")
            raise ConfigError(refusal(table, error, entry.obj.model, where)) from None
        try:
            entry.obj.configure(settings)
        except Exception as exc:
            raise PluginLoadError(
                f"plugin {name!r} failed taking its settings: {type(exc).__name__}: {exc}"
            ) from exc
