"""``zeroclaw eval plugins``: what is registered, by which plugin, from where."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from zeroclaw_eval.cli.common import errors_to_exit, plugin_manager, plugin_option

if TYPE_CHECKING:
    from collections.abc import Mapping

    from zeroclaw_eval.plugins.registry import Registered, Registry


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON document instead of text.")
@plugin_option
def plugins(as_json: bool, blocked: tuple[str, ...]) -> None:
    """List the registered plugins, where they come from and what they provide.

    A plugin comes from an installed distribution (shown with its version and
    entry point) or is built in. Blocked plugins are listed last.
    """
    from zeroclaw_eval.plugins.registry import KINDS, Registry

    with errors_to_exit():
        pm = plugin_manager(blocked)
        registry = Registry.from_plugin_manager(pm)
    never_loaded = sorted(name for name, plugin in pm.list_name_plugin() if plugin is None)
    rows = [
        {
            "name": origin.name,
            "builtin": origin.builtin,
            "distribution": origin.distribution,
            "version": origin.version,
            "entry_point": origin.entry_point,
            "provides": registry.provided_by(origin.name),
            "descriptions": {
                kind: {name: description(registry, kind, name) for name in names}
                for kind, names in registry.provided_by(origin.name).items()
                if names and kind != "tools"
            },
        }
        for origin in pm.origins.values()
    ]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "blocked": never_loaded}, indent=2))
        return
    for origin in pm.origins.values():
        if origin.distribution:
            source = f"{origin.distribution} {origin.version}, entry point {origin.entry_point}"
        else:
            source = "built-in" if origin.builtin else "in-process"
        click.echo(f"{origin.name} ({source})")
        provided = registry.provided_by(origin.name)
        for kind in KINDS:
            if provided[kind]:
                click.echo(f"    {kind}: {', '.join(provided[kind])}")
                for name in provided[kind]:
                    if said := description(registry, kind, name):
                        click.echo(f"        {name}: {said}")
    if never_loaded:
        click.echo(f"blocked: {', '.join(never_loaded)}")


def description(registry: Registry, kind: str, name: str) -> str:
    """What a registered family, formatter or mode says it does (tools say nothing)."""
    from zeroclaw_eval.errors import one_line

    tables: dict[str, Mapping[str, Registered[Any]]] = {
        "families": registry.families,
        "formatters": registry.formatters,
        "modes": registry.modes,
    }
    entry = tables.get(kind, {}).get(name)
    return one_line(str(getattr(entry.obj, "description", "") or "")) if entry else ""
