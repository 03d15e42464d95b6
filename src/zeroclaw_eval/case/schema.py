"""The JSON Schema of a fixture: what ``zeroclaw eval schema`` prints for editors.

Built from the same strict models admission uses (:class:`~zeroclaw_eval.case.fixture.LlmTrace`)
and from the parameter type of every registered family, so a family an installed
plugin adds appears in ``expects`` like a built-in one. The schema is a draft
2020-12 document an editor can validate against as the fixture is typed.

It may be looser than admission, never stricter: a fixture it accepts can still be
refused (a regex that does not compile, contradictory bounds, an empty run that
satisfies everything are admission's own rules), but every fixture admission
admits is valid against it, so an editor never flags a fixture the harness runs.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter
from pydantic.errors import PydanticUserError
from pydantic.json_schema import JsonSchemaMode

from zeroclaw_eval.case.fixture import SCHEMA_KEY, LlmTrace
from zeroclaw_eval.plugins.registry import Registry

DRAFT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect of the document."""

_TRACE = "fixture"


def fixture_schema(registry: Registry) -> dict[str, Any]:
    """The draft 2020-12 JSON Schema of a fixture, with every family of ``registry``.

    ``expects`` lists each family as a property (its description, its parameter
    schema) and admits no other key, as admission refuses an unknown family. A
    family whose parameter type has no JSON Schema form (a custom Python
    validator, say) accepts anything here: admission still checks it.
    """
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (_TRACE, "validation", TypeAdapter(LlmTrace))
    ]
    unrepresentable: set[str] = set()
    for name, entry in sorted(registry.families.items()):
        adapter = entry.obj.adapter
        try:
            adapter.json_schema()
        except PydanticUserError:
            unrepresentable.add(name)
            continue
        inputs.append((name, "validation", adapter))
    schemas, definitions = TypeAdapter.json_schemas(inputs)
    trace = dict(schemas[(_TRACE, "validation")])
    trace_ref = trace.pop("$ref", None)
    if trace_ref is not None:  # the trace itself was put among the definitions
        trace = dict(definitions.get("$defs", {}).pop(trace_ref.rsplit("/", 1)[-1]))

    families: dict[str, Any] = {}
    for name, entry in sorted(registry.families.items()):
        family = entry.obj
        if name in unrepresentable:
            params: dict[str, Any] = {"$comment": "no JSON Schema form: checked at admission"}
        else:
            params = dict(schemas[(name, "validation")])
        params.pop("title", None)
        description = family.description or (type(family).__doc__ or "").strip()
        if description:
            params["description"] = f"{description} [plugin: {entry.plugin}]"
        families[name] = params

    properties = {
        SCHEMA_KEY: {
            "type": "string",
            "description": "The JSON Schema this fixture is written against; ignored by admission.",
        },
        **trace["properties"],
        "expects": {
            "type": "object",
            "description": "One key per expectation family; at least one.",
            "properties": families,
            "additionalProperties": False,
            "minProperties": 1,
        },
    }
    document: dict[str, Any] = {
        SCHEMA_KEY: DRAFT,
        "title": "zeroclaw-eval fixture",
        "description": "A case for zeroclaw eval: scripted model responses, replayed through "
        "a real agent loop, graded against its expects.",
        **{key: value for key, value in trace.items() if key not in ("title", "description")},
        "properties": properties,
    }
    defs = definitions.get("$defs")
    if defs:
        document["$defs"] = defs
    return document
