"""``zeroclaw eval schema``: print the fixtures' JSON Schema, for editors."""

from __future__ import annotations

import json

from zeroclaw_eval.cli import _emit, _errors, _plugin_manager, eval_group, plugin_option


@eval_group.command()
@plugin_option
def schema(blocked: tuple[str, ...]) -> None:
    """Print the JSON Schema (draft 2020-12) of a fixture, with every installed family.

    Save it and point an editor at it (VS Code: the ``json.schemas`` setting), or
    name it in a fixture's top-level "$schema" key, which admission ignores.
    """
    from zeroclaw_eval.registry import Registry
    from zeroclaw_eval.schema import fixture_schema

    with _errors():
        registry = Registry.from_plugin_manager(_plugin_manager(blocked))
        _emit(json.dumps(fixture_schema(registry), ensure_ascii=False, indent=2) + "\n")
