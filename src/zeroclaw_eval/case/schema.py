"""The JSON Schema of a fixture: what ``zeroclaw eval schema`` prints for editors.

Built from the same strict models admission uses (:class:`~zeroclaw_eval.case.fixture.LlmTrace`)
and from the parameter type of every registered family, so a family an installed
plugin adds appears in ``expects`` like a built-in one. The schema is a draft
2020-12 document an editor can validate against as the fixture is typed.

It may be looser than admission, never stricter: a fixture it accepts can still be
refused (a regex that does not compile, contradictory bounds, an empty run that
satisfies everything are admission's own rules), but every fixture admission
admits is valid against it, so an editor never flags a fixture the harness runs.

It is shaped so that a validator's error points at the bad key, not at the
whole array around it: a union with a discriminator (a response's ``type``)
becomes ``if``/``then`` on the discriminator's value, so a typo inside a
``tool_calls`` response is checked against that response's schema alone and an
unknown ``type`` is an error on ``type``; and "this or null" becomes one schema
whose ``type`` allows null, instead of an ``anyOf`` that reports only "not valid
under any of the given schemas".
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
    shaped: dict[str, Any] = _pointed(document)
    return shaped


def _pointed(node: Any) -> Any:
    """``node`` with its unions reshaped so that errors point at the bad key (see the
    module's docstring); the set of valid documents is unchanged."""
    if isinstance(node, list):
        return [_pointed(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _pointed(value) for key, value in node.items()}
    discriminator = node.get("discriminator")
    if isinstance(discriminator, dict) and "oneOf" in node:
        return _by_discriminator(node, discriminator)
    alternatives = node.get("anyOf")
    if (
        isinstance(alternatives, list)
        and len(alternatives) == 2
        and {"type": "null"} in alternatives
    ):
        other = alternatives[1 - alternatives.index({"type": "null"})]
        kind = other.get("type") if isinstance(other, dict) else None
        # Only a typed schema merges: its other keywords apply to its own type alone.
        if (
            isinstance(kind, str)
            and kind != "null"
            and "const" not in other
            and "enum" not in other
        ):
            merged = {key: value for key, value in node.items() if key != "anyOf"}
            return {**other, **merged, "type": [kind, "null"]}
    return node


def _by_discriminator(node: dict[str, Any], discriminator: dict[str, Any]) -> dict[str, Any]:
    """A discriminated ``oneOf`` as ``if``/``then`` on the discriminator's value."""
    field = discriminator["propertyName"]
    mapping: dict[str, str] = discriminator["mapping"]
    rest = {key: value for key, value in node.items() if key not in ("oneOf", "discriminator")}
    return {
        **rest,
        "type": "object",
        "required": [field],
        "properties": {field: {"enum": list(mapping)}},
        "allOf": [
            {
                "if": {"properties": {field: {"const": value}}, "required": [field]},
                "then": {"$ref": reference},
            }
            for value, reference in mapping.items()
        ],
    }
