"""``zeroclaw eval schema``: print the fixtures' JSON Schema, for editors."""

from __future__ import annotations

import json

import click

from zeroclaw_eval.cli.common import emit, errors_to_exit, plugin_manager, plugin_option


@click.command()
@plugin_option
def schema(blocked: tuple[str, ...]) -> None:
    """Print the JSON Schema (draft 2020-12) of a fixture, with every installed family.

    Save it and point an editor at it (VS Code: the ``json.schemas`` setting), or
    name it in a fixture's top-level "$schema" key, which admission ignores.
    """
    from zeroclaw_eval.case.schema import fixture_schema
    from zeroclaw_eval.plugins.registry import Registry

    with errors_to_exit():
        registry = Registry.from_plugin_manager(plugin_manager(blocked))
        emit(json.dumps(fixture_schema(registry), ensure_ascii=False, indent=2) + "\n")
