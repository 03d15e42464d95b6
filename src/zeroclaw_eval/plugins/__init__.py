"""The plugin system: the plugin manager, and the typed registry of what plugins provide.

``zeroclaw_eval.plugins.DEFAULT_PLUGINS`` and ``get_plugin_manager`` are here, as
the hook reference documents them.
"""

from zeroclaw_eval.plugins.manager import (
    DEFAULT_PLUGINS,
    DISABLE_AUTOLOAD_ENV,
    DISABLE_PLUGINS_ENV,
    PluginManager,
    PluginOrigin,
    blocked_from_options,
    builtin_name,
    get_plugin_manager,
)

__all__ = [
    "DEFAULT_PLUGINS",
    "DISABLE_AUTOLOAD_ENV",
    "DISABLE_PLUGINS_ENV",
    "PluginManager",
    "PluginOrigin",
    "blocked_from_options",
    "builtin_name",
    "get_plugin_manager",
]
